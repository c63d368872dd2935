//! routemu's text trace format (traces/README.md): one message per line, in time order.
//!
//! ```text
//! # comments start with '#', anywhere
//! time  src  dst  bytes  id  deps
//! 0     0    1    72     0   2,3
//! 5     1    0    8      1   -
//! ```
//!
//! The first line that is not a comment names the columns (whitespace- or tab-
//! separated). `time`-something (`time`, `time_ns`, `cycle`), `src`, `dst` and either
//! `bytes` or `flits` are required, which also says the size unit; `id` and `deps`
//! (the ids of later messages that wait for this one, comma-separated, `-` for none) are
//! optional; other columns (`tag`, …) are ignored. Without an `id` column a message's id
//! is its line's rank (0, 1, …). Times must not decrease, and ids must increase from
//! line to line: that makes every id unique and every dependant later than its parent
//! with no memory of the ids read (the trace is streamed). A line is at most
//! [`MAX_LINE`] bytes, and a UTF-8 byte-order mark before the first line is skipped. The
//! stencil4d tables of ../shared/traces/ are valid input as they are. Plain, gzip or
//! bzip2.

use crate::foundation::error::{Error, Result};
use crate::trace::{SizeUnit, TraceMsg, TraceSource};
use std::io::BufRead;
use std::path::Path;

/// The longest line a text trace may have, in bytes (a line is a handful of numbers; a
/// cap keeps a corrupt or hostile file — one endless line — from filling memory).
pub const MAX_LINE: usize = 64 * 1024;

/// Streams a text trace.
pub struct TextReader {
    lines: Box<dyn BufRead>,
    path: String,
    line: u64,
    buf: String,
    unit: SizeUnit,
    cols: Columns,
    next_id: u64,
    last_time: u64,
    /// The last id read (None before the first message).
    last_id: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
struct Columns {
    time: usize,
    src: usize,
    dst: usize,
    size: usize,
    id: Option<usize>,
    deps: Option<usize>,
    count: usize,
}

impl TextReader {
    /// Reads the column line of `lines` (from `path`, for messages).
    pub fn new(lines: Box<dyn BufRead>, path: &Path) -> Result<Self> {
        let mut r = TextReader {
            lines,
            path: path.display().to_string(),
            line: 0,
            buf: String::new(),
            unit: SizeUnit::Bytes,
            cols: Columns {
                time: 0,
                src: 0,
                dst: 0,
                size: 0,
                id: None,
                deps: None,
                count: 0,
            },
            next_id: 0,
            last_time: 0,
            last_id: None,
        };
        let Some(head) = r.content_line()? else {
            return Err(r.err("no column line (expected e.g. `time src dst bytes`)"));
        };
        let names: Vec<String> = head.split_whitespace().map(str::to_lowercase).collect();
        let find = |f: &dyn Fn(&str) -> bool| names.iter().position(|n| f(n));
        let need = |i: Option<usize>, what: &str| {
            i.ok_or_else(|| r.err(&format!("the column line has no `{what}` column")))
        };
        let time = need(find(&|n| n.starts_with("time") || n == "cycle"), "time")?;
        let src = need(find(&|n| n == "src"), "src")?;
        let dst = need(find(&|n| n == "dst"), "dst")?;
        let (size, unit) = match (find(&|n| n == "bytes"), find(&|n| n == "flits")) {
            (Some(i), None) => (i, SizeUnit::Bytes),
            (None, Some(i)) => (i, SizeUnit::Flits),
            _ => return Err(r.err("the column line needs exactly one of `bytes` and `flits`")),
        };
        r.unit = unit;
        r.cols = Columns {
            time,
            src,
            dst,
            size,
            id: find(&|n| n == "id"),
            deps: find(&|n| n == "deps"),
            count: names.len(),
        };
        Ok(r)
    }

    fn err(&self, what: &str) -> Error {
        Error::Trace(format!("{}:{}: {what}", self.path, self.line))
    }

    /// The next line that is neither empty nor a comment.
    fn content_line(&mut self) -> Result<Option<String>> {
        loop {
            if !self.read_line()? {
                return Ok(None);
            }
            self.line += 1;
            let mut text = self.buf.as_str();
            if self.line == 1 {
                text = text.strip_prefix('\u{feff}').unwrap_or(text);
            }
            let t = text.split('#').next().unwrap_or("").trim();
            if !t.is_empty() {
                return Ok(Some(t.to_string()));
            }
        }
    }

    /// Reads the next line into `buf` (false at the end), refusing one longer than
    /// [`MAX_LINE`] before holding more than that of it.
    fn read_line(&mut self) -> Result<bool> {
        let at = self.line + 1;
        let fail = |path: &str, what: String| Error::Trace(format!("{path}:{at}: {what}"));
        let mut bytes = Vec::new();
        loop {
            let chunk = match self.lines.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(fail(&self.path, e.to_string())),
            };
            if chunk.is_empty() {
                break;
            }
            let (take, end) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if bytes.len() + take > MAX_LINE + 1 {
                return Err(fail(
                    &self.path,
                    format!("line longer than {MAX_LINE} bytes (not a text trace?)"),
                ));
            }
            bytes.extend_from_slice(&chunk[..take]);
            self.lines.consume(take);
            if end {
                break;
            }
        }
        if bytes.is_empty() {
            return Ok(false);
        }
        self.buf = String::from_utf8(bytes)
            .map_err(|_| fail(&self.path, "stream did not contain valid UTF-8".into()))?;
        Ok(true)
    }
}

impl TraceSource for TextReader {
    fn next_msg(&mut self) -> Result<Option<TraceMsg>> {
        let Some(line) = self.content_line()? else {
            return Ok(None);
        };
        let f: Vec<&str> = line.split_whitespace().collect();
        let place = format!("{}:{}", self.path, self.line);
        let err = |what: &str| Error::Trace(format!("{place}: {what}"));
        let c = self.cols;
        if f.len() < c.count {
            return Err(err(&format!(
                "{} fields where the column line names {}",
                f.len(),
                c.count
            )));
        }
        let num = |i: usize, what: &str| -> Result<u64> {
            f[i].parse::<u64>()
                .map_err(|_| err(&format!("{what} `{}` is not a whole number", f[i])))
        };
        let time = num(c.time, "time")?;
        if time < self.last_time {
            return Err(err(&format!(
                "time goes backwards ({time} after {})",
                self.last_time
            )));
        }
        self.last_time = time;
        let node = |i: usize, what: &str| -> Result<u32> {
            u32::try_from(num(i, what)?).map_err(|_| err(&format!("{what} out of range")))
        };
        let id = match c.id {
            Some(i) => num(i, "id")?,
            None => self.next_id,
        };
        self.next_id += 1;
        if let Some(last) = self.last_id.filter(|&l| id <= l) {
            return Err(err(&format!(
                "id {id} after {last}: ids must increase from line to line \
                 (each is unique, and a dependant comes after its parent)"
            )));
        }
        self.last_id = Some(id);
        let children = match c.deps {
            Some(i) if f[i] != "-" => f[i]
                .split(',')
                .map(|d| {
                    d.parse::<u64>()
                        .map_err(|_| err(&format!("dependency `{d}` is not an id")))
                })
                .collect::<Result<Vec<_>>>()?,
            _ => Vec::new(),
        };
        if let Some(&d) = children.iter().find(|&&d| d <= id) {
            return Err(err(&format!(
                "message {id} lists {d} as depending on it; dependants come later"
            )));
        }
        Ok(Some(TraceMsg {
            id,
            time,
            src: node(c.src, "src")?,
            dst: node(c.dst, "dst")?,
            size: num(c.size, "size")?,
            children,
            lag_from: None,
            successor: None,
        }))
    }

    fn unit(&self) -> SizeUnit {
        self.unit
    }

    fn place(&self) -> String {
        format!("{}:{}", self.path, self.line)
    }

    fn ids_increase(&self) -> bool {
        true
    }

    fn endpoints(&self) -> Option<u32> {
        None
    }

    fn describe(&self) -> String {
        format!("{} (routemu text trace)", self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(text: &str) -> Result<TextReader> {
        TextReader::new(
            Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
            Path::new("t.txt"),
        )
    }

    fn all(text: &str) -> Result<Vec<TraceMsg>> {
        let mut r = reader(text)?;
        let mut v = Vec::new();
        while let Some(m) = r.next_msg()? {
            v.push(m);
        }
        Ok(v)
    }

    #[test]
    fn columns_are_found_by_name_and_unknown_ones_ignored() {
        let v = all(
            "# a comment\ntime_ns\tsrc\tdst\tbytes\ttag\n0\t0\t1\t128\t2\n\n7 2 3 64 9 # tail\n",
        )
        .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[1].id, v[1].time, v[1].src, v[1].dst, v[1].size),
            (1, 7, 2, 3, 64)
        );
        let v = all("cycle dst src flits id deps\n3 4 5 2 10 11,12\n4 5 4 1 11 -\n").unwrap();
        assert_eq!((v[0].src, v[0].dst, v[0].id), (5, 4, 10));
        assert_eq!(v[0].children, [11, 12]);
        assert!(v[1].children.is_empty());
        assert_eq!(
            reader("time src dst flits\n").unwrap().unit(),
            SizeUnit::Flits
        );
    }

    #[test]
    fn bad_lines_are_errors_naming_the_line() {
        for (text, line, why) in [
            ("time src dst bytes\n1 2 3\n", 2, "3 fields"),
            ("time src dst bytes\n5 0 1 8\n4 0 1 8\n", 3, "backwards"),
            ("time src dst bytes\n5 0 x 8\n", 2, "not a whole number"),
            ("time src bytes\n", 1, "`dst`"),
            ("time src dst bytes flits\n", 1, "exactly one"),
            ("# only comments\n", 1, "no column line"),
            ("time src dst bytes id deps\n0 0 1 8 4 3\n", 2, "come later"),
            // Duplicate ids (issue 18, D02), and a dependant read before the parent
            // that names it (D12): both break the increasing ids.
            (
                "time src dst flits id\n0 0 1 1 5\n0 1 2 1 5\n",
                3,
                "id 5 after 5",
            ),
            (
                "time src dst flits id deps\n0 0 1 1 10 -\n0 1 2 4 3 10\n",
                3,
                "id 3 after 10",
            ),
        ] {
            let e = all(text).unwrap_err().to_string();
            assert!(
                e.contains(&format!("t.txt:{line}:")) && e.contains(why),
                "{text:?}: {e}"
            );
        }
    }

    #[test]
    fn a_byte_order_mark_before_the_column_line_is_skipped() {
        let v = all("\u{feff}time src dst flits\n0 1 2 3\n").unwrap();
        assert_eq!((v[0].src, v[0].dst, v[0].size), (1, 2, 3));
        // Only at the very start: elsewhere it is a malformed field.
        assert!(all("time src dst flits\n\u{feff}0 1 2 3\n").is_err());
    }

    #[test]
    fn a_line_longer_than_the_cap_is_refused_without_reading_it_whole() {
        // An endless line (a decompression bomb's): the reader must stop at the cap.
        struct Endless;
        impl std::io::Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                buf.fill(b'9');
                Ok(buf.len())
            }
        }
        let head = std::io::Cursor::new(b"time src dst flits\n0 1 2 ".to_vec());
        let r = std::io::BufReader::new(std::io::Read::chain(head, Endless));
        let mut t = TextReader::new(Box::new(r), Path::new("t.txt")).unwrap();
        let e = t.next_msg().unwrap_err().to_string();
        assert!(
            e.contains("t.txt:2:") && e.contains("longer than 65536"),
            "{e}"
        );
        // A line of exactly the cap is fine.
        let line = format!("0 1 2 3 {}\n", "x".repeat(MAX_LINE - 9));
        assert_eq!(line.len(), MAX_LINE);
        let v = all(&format!("time src dst flits tag\n{line}")).unwrap();
        assert_eq!(v.len(), 1);
    }
}

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
//! is its line's rank (0, 1, …). Times must not decrease. The stencil4d tables of
//! ../shared/traces/ are valid input as they are. Plain, gzip or bzip2.

use super::{SizeUnit, TraceMsg, TraceSource};
use crate::error::{Error, Result};
use std::io::BufRead;
use std::path::Path;

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
            self.buf.clear();
            let n = self
                .lines
                .read_line(&mut self.buf)
                .map_err(|e| Error::Trace(format!("{}:{}: {e}", self.path, self.line + 1)))?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            let t = self.buf.split('#').next().unwrap_or("").trim();
            if !t.is_empty() {
                return Ok(Some(t.to_string()));
            }
        }
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
            successor: None,
        }))
    }

    fn unit(&self) -> SizeUnit {
        self.unit
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
        ] {
            let e = all(text).unwrap_err().to_string();
            assert!(
                e.contains(&format!("t.txt:{line}:")) && e.contains(why),
                "{text:?}: {e}"
            );
        }
    }
}

//! The CSV tables figures are drawn from: writing cells so that any value survives
//! (RFC 4180 quoting: a cell holding a comma, a quote or a line break is quoted, quotes
//! doubled — a swept RON value like `Uniform(min: 8, max: 16)` is one cell), and reading
//! them back quote-aware, with the line of any malformed record in the error.
//!
//! Not here: what the columns mean (`redraw`), the sweep's columns (`cli::sweep`).

use crate::foundation::error::{Error, Result};

/// A CSV table: a header and rows of as many cells.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Column names.
    pub head: Vec<String>,
    /// Records, each with one cell per column.
    pub rows: Vec<Vec<String>>,
}

/// One cell as CSV: quoted (quotes doubled) when it holds a comma, a quote, a line break
/// or surrounding spaces, as is otherwise.
pub fn cell(s: &str) -> String {
    let needs = s.contains([',', '"', '\n', '\r']) || s.trim() != s;
    if needs {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One record as a CSV line (with its line break).
pub fn line<S: AsRef<str>>(cells: &[S]) -> String {
    let mut s = cells
        .iter()
        .map(|c| cell(c.as_ref()))
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    s
}

impl Table {
    /// The whole table as CSV text.
    pub fn to_csv(&self) -> String {
        let mut s = line(&self.head);
        for r in &self.rows {
            s.push_str(&line(r));
        }
        s
    }

    /// The index of column `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.head.iter().position(|h| h == name)
    }

    /// Column `i` as numbers (empty cells: None), or None when a non-empty cell is not a
    /// number or no cell has one.
    pub fn numbers(&self, i: usize) -> Option<Vec<Option<f64>>> {
        let mut any = false;
        let mut out = Vec::with_capacity(self.rows.len());
        for r in &self.rows {
            let c = r[i].trim();
            if c.is_empty() {
                out.push(None);
            } else {
                out.push(Some(c.parse::<f64>().ok().filter(|v| !v.is_nan())?));
                any = true;
            }
        }
        any.then_some(out)
    }

    /// Reads CSV `text` (`name` is for messages): RFC 4180 records, the first the
    /// header; blank lines and `#` comment lines before the header are skipped.
    pub fn parse(text: &str, name: &str) -> Result<Table> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut records = Vec::new();
        let mut cur: Vec<String> = Vec::new();
        let mut field = String::new();
        let (mut quoted, mut was_quoted, mut line_no, mut start_line) = (false, false, 1, 1);
        let mut chars = text.chars().peekable();
        let bad = |line: usize, why: &str| Error::Arg(format!("{name}:{line}: {why}"));
        while let Some(c) = chars.next() {
            if quoted {
                match c {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    '"' => quoted = false,
                    '\n' => {
                        line_no += 1;
                        field.push(c);
                    }
                    _ => field.push(c),
                }
                continue;
            }
            match c {
                '"' if field.is_empty() && !was_quoted => {
                    quoted = true;
                    was_quoted = true;
                }
                '"' => return Err(bad(line_no, "a quote inside an unquoted cell")),
                ',' => {
                    cur.push(std::mem::take(&mut field));
                    was_quoted = false;
                }
                '\r' if chars.peek() == Some(&'\n') => {}
                '\n' | '\r' => {
                    cur.push(std::mem::take(&mut field));
                    records.push((start_line, std::mem::take(&mut cur), was_quoted));
                    was_quoted = false;
                    line_no += 1;
                    start_line = line_no;
                }
                _ if was_quoted => {
                    return Err(bad(line_no, "text after a quoted cell's closing quote"))
                }
                _ => field.push(c),
            }
        }
        if quoted {
            return Err(bad(start_line, "a quoted cell is not closed"));
        }
        if !field.is_empty() || !cur.is_empty() || was_quoted {
            cur.push(field);
            records.push((start_line, cur, was_quoted));
        }
        // A blank line is one empty unquoted cell.
        let blank = |r: &(usize, Vec<String>, bool)| r.1.len() == 1 && r.1[0].is_empty() && !r.2;
        let comment = |r: &(usize, Vec<String>, bool)| r.1[0].starts_with('#') && !r.2;
        // Comment lines (`#` first, unquoted) are skipped wherever they stand: a header
        // comment, or the `# partial` line that ends a CSV written after a signal.
        let mut it = records.into_iter().filter(|r| !blank(r) && !comment(r));
        let (_, head, _) = it
            .next()
            .ok_or_else(|| Error::Arg(format!("{name}: no header line")))?;
        let head: Vec<String> = head.into_iter().map(|h| h.trim().to_string()).collect();
        if head.iter().any(|h| h.is_empty()) {
            return Err(Error::Arg(format!("{name}: a column without a name")));
        }
        let mut rows = Vec::new();
        for (line, r, _) in it {
            if r.len() != head.len() {
                return Err(bad(
                    line,
                    &format!(
                        "{} cells where the header has {} columns",
                        r.len(),
                        head.len()
                    ),
                ));
            }
            rows.push(r);
        }
        Ok(Table { head, rows })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_with_commas_quotes_and_line_breaks_survive_a_round_trip() {
        let t = Table {
            head: vec!["workload.length".into(), "x".into()],
            rows: vec![
                vec!["Uniform(min: 8, max: 16)".into(), "1".into()],
                vec!["say \"hi\"".into(), "".into()],
                vec!["two\nlines".into(), "3".into()],
            ],
        };
        let text = t.to_csv();
        assert!(text.contains("\"Uniform(min: 8, max: 16)\",1"), "{text}");
        assert_eq!(Table::parse(&text, "t").unwrap(), t);
        assert_eq!(
            Table::parse(&text.replace('\n', "\r\n"), "t")
                .unwrap()
                .rows
                .len(),
            3
        );
    }

    #[test]
    fn numbers_skip_empty_cells_and_refuse_text() {
        let t = Table::parse("a,b,c\n1,x,\n2.5,y,\n", "t").unwrap();
        assert_eq!(t.numbers(0), Some(vec![Some(1.0), Some(2.5)]));
        assert_eq!(t.numbers(1), None);
        assert_eq!(t.numbers(2), None, "no value at all");
    }

    #[test]
    fn malformed_records_name_their_line() {
        for (text, why) in [
            ("a,b\n1,2\n3\n", "t:3: 1 cells"),
            ("a,b\n\"1,2\n", "not closed"),
            ("a,b\n1\"x,2\n", "t:2: a quote inside"),
            ("a,b\n\"1\"x,2\n", "after a quoted cell"),
            ("", "no header"),
            ("a,,b\n", "without a name"),
        ] {
            let e = Table::parse(text, "t").unwrap_err().to_string();
            assert!(e.contains(why), "{text:?}: {e}");
        }
        // Comments and blank lines before the header, a trailing line without a break.
        let t = Table::parse("# made by hand\n\na,b\n1,2", "t").unwrap();
        assert_eq!(t.rows, vec![vec!["1", "2"]]);
    }
}

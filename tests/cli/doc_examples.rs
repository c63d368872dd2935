//! The documentation's example outputs are what the code prints today. An example is a
//! marker line followed by the output, indented by four spaces:
//!
//! ```text
//! <!-- example: run hw/wormhole-mesh-dor.ron --set topology.k=4 --cycles 2000 | lines 2-6 -->
//!       64 nodes, …
//! ```
//!
//! The marker holds routemu's arguments (run from a scratch directory where `hw/`,
//! `traces/` and `docs/` are the repository's, so written files land there), then optional
//! filters: `| file NAME` (a file the command wrote instead of standard output),
//! `| lines 1-4,7` (1-based, inclusive ranges and single lines) and `| grep TEXT` (the
//! lines containing TEXT; several greps keep the lines any of them matches).
//! Wall-clock figures (a number followed by `s`, `ms`, `µs`, or `node-cycles/s`) are
//! compared as `…`: they belong to the machine, not to the code.
//!
//! `ROUTEMU_UPDATE_DOCS=1` rewrites every block with what the binary prints instead of
//! comparing (`docs/regenerate-examples` does that with a release build). Examples marked
//! `example (slow):` take minutes; they are checked by the ignored test
//! `slow_doc_examples_print_what_the_code_prints_today`, which the script runs, and listed
//! by the fast test so that none goes unseen.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One example of one page.
struct Example {
    page: PathBuf,
    /// Index of the marker line.
    marker: usize,
    /// routemu's arguments.
    args: Vec<String>,
    file: Option<String>,
    lines: Vec<(usize, usize)>,
    grep: Vec<String>,
    slow: bool,
    /// The block as the page has it (without the indentation).
    block: Vec<String>,
}

fn examples() -> Vec<Example> {
    let mut out = Vec::new();
    for page in super::docs::pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim();
            let (slow, rest) = if let Some(r) = t.strip_prefix("<!-- example (slow):") {
                (true, r)
            } else if let Some(r) = t.strip_prefix("<!-- example:") {
                (false, r)
            } else {
                continue;
            };
            let body = rest
                .strip_suffix("-->")
                .unwrap_or_else(|| panic!("{}:{}: unclosed marker", page.display(), i + 1));
            let mut parts = body.split(" | ");
            let args = super::docs::words(parts.next().unwrap().trim());
            let (mut file, mut range, mut grep) = (None, Vec::new(), Vec::new());
            for f in parts {
                let f = f.trim();
                if let Some(r) = f.strip_prefix("lines ") {
                    for item in r.split(',') {
                        let (a, b) = item.split_once('-').unwrap_or((item, item));
                        range.push((a.trim().parse().unwrap(), b.trim().parse().unwrap()));
                    }
                } else if let Some(name) = f.strip_prefix("file ") {
                    file = Some(name.trim().to_string());
                } else if let Some(g) = f.strip_prefix("grep ") {
                    grep.push(g.to_string());
                } else {
                    panic!("{}:{}: unknown filter `{f}`", page.display(), i + 1);
                }
            }
            let block = lines[i + 1..]
                .iter()
                .take_while(|l| l.starts_with("    "))
                .map(|l| l[4..].to_string())
                .collect();
            out.push(Example {
                page: page.clone(),
                marker: i,
                args,
                file,
                lines: range,
                grep,
                slow,
                block,
            });
        }
    }
    out
}

/// A scratch directory where the repository's inputs are visible by their relative paths.
fn scratch() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for sub in ["hw", "traces", "docs"] {
        std::os::unix::fs::symlink(root().join(sub), d.path().join(sub)).unwrap();
    }
    d
}

/// What the example's command prints, filtered as the marker says.
fn output(e: &Example) -> Vec<String> {
    let dir = scratch();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_routemu"))
        .args(&e.args)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c == 0 || c == 4),
        "{}:{}: routemu {:?} failed: {}",
        e.page.display(),
        e.marker + 1,
        e.args,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = match &e.file {
        Some(name) => std::fs::read_to_string(dir.path().join(name))
            .unwrap_or_else(|err| panic!("{}:{}: {name}: {err}", e.page.display(), e.marker + 1)),
        None => String::from_utf8_lossy(&out.stdout).into_owned(),
    };
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if !e.lines.is_empty() {
        lines = lines
            .into_iter()
            .enumerate()
            .filter(|(i, _)| e.lines.iter().any(|&(a, b)| (a..=b).contains(&(i + 1))))
            .map(|(_, l)| l)
            .collect();
    }
    if !e.grep.is_empty() {
        lines.retain(|l| e.grep.iter().any(|g| l.contains(g.as_str())));
    }
    lines.iter().map(|l| l.trim_end().to_string()).collect()
}

/// `l` with its wall-clock figures as `…`.
fn masked(l: &str) -> String {
    let words: Vec<&str> = l.split(' ').collect();
    let timing = |w: &str| {
        let w = w.trim_end_matches([',', ')', ';']);
        matches!(w, "s" | "ms" | "µs" | "node-cycles/s") || w.ends_with("node-cycles/s")
    };
    let number = |w: &str| {
        let w = w.trim_start_matches('(');
        !w.is_empty() && w.chars().all(|c| c.is_ascii_digit() || c == '.')
    };
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).copied().unwrap_or("");
        let unit_after = timing(next)
            || (matches!(next, "k" | "M" | "G") && timing(words.get(i + 2).copied().unwrap_or("")));
        if number(w) && unit_after {
            out.push(if w.starts_with('(') { "(…" } else { "…" }.to_string());
        } else {
            out.push(w.to_string());
        }
    }
    out.join(" ")
}

fn check(slow: bool) {
    let update = std::env::var_os("ROUTEMU_UPDATE_DOCS").is_some();
    let all = examples();
    assert!(!all.is_empty(), "no examples found: the markers changed?");
    let mut stale = Vec::new();
    let mut rewrites: Vec<(PathBuf, usize, usize, Vec<String>)> = Vec::new();
    for e in all.iter().filter(|e| e.slow == slow) {
        let got = output(e);
        let same = got.len() == e.block.len()
            && got
                .iter()
                .zip(&e.block)
                .all(|(a, b)| masked(a) == masked(b));
        if !same {
            stale.push(format!(
                "{}:{}: routemu {}\n  the page has:\n    {}\n  the code prints:\n    {}",
                e.page.display(),
                e.marker + 1,
                e.args.join(" "),
                e.block.join("\n    "),
                got.join("\n    ")
            ));
            rewrites.push((e.page.clone(), e.marker, e.block.len(), got));
        }
    }
    if update {
        // Back to front within a page, so earlier markers keep their line numbers.
        rewrites.sort_by(|a, b| (&a.0, b.1).cmp(&(&b.0, a.1)));
        for (page, marker, old, new) in rewrites {
            let text = std::fs::read_to_string(&page).unwrap();
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            let fresh: Vec<String> = new.iter().map(|l| format!("    {l}")).collect();
            lines.splice(marker + 1..marker + 1 + old, fresh);
            std::fs::write(&page, lines.join("\n") + "\n").unwrap();
        }
        return;
    }
    assert!(
        stale.is_empty(),
        "{} example output(s) differ from what the code prints today (run \
         docs/regenerate-examples, then read the diff):\n{}",
        stale.len(),
        stale.join("\n")
    );
}

#[test]
fn doc_examples_print_what_the_code_prints_today() {
    let slow: Vec<String> = examples()
        .iter()
        .filter(|e| e.slow)
        .map(|e| format!("{}:{}", e.page.display(), e.marker + 1))
        .collect();
    if !slow.is_empty() {
        eprintln!(
            "slow doc examples, checked by `cargo test --release --test cli -- --ignored \
             slow_doc_examples`: {}",
            slow.join(", ")
        );
    }
    check(false);
}

#[test]
#[ignore = "minutes of emulation: run by docs/regenerate-examples"]
fn slow_doc_examples_print_what_the_code_prints_today() {
    check(true);
}

#[test]
fn wall_clock_figures_are_masked_and_nothing_else() {
    assert_eq!(
        masked("  0.14 s wall, 1.39 M node-cycles/s"),
        "  … s wall, … M node-cycles/s"
    );
    assert_eq!(
        masked("probes, 189304 cycles, 0.7 s"),
        "probes, 189304 cycles, … s"
    );
    assert_eq!(masked("(0.95 s) mean 9.64"), "(… s) mean 9.64");
    assert_eq!(masked("latency 411 cycles"), "latency 411 cycles");
}

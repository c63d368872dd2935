//! The documentation's promises: every `routemu` command shown in README.md and docs/
//! is a command routemu accepts — it parses, its files exist and its machine passes
//! validation — and the cheap ones (`check`, `predict`) are run to completion; and every
//! markdown table renders (no blank line or stray line inside it).
//!
//! Long emulations are not run here (the suite must stay within minutes on two cores):
//! for `run`, `compare`, `sweep` and the like the test builds the exact configuration
//! the command would emulate and validates it, which is where a stale flag, path or
//! preset fails.

use crate::common;

use clap::Parser;
use routemu::cli::{Cli, Command};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, docs/*.md, traces/*.md.
pub fn pages() -> Vec<PathBuf> {
    let mut v = vec![root().join("README.md")];
    for dir in ["docs", "traces"] {
        let mut more: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        more.sort();
        v.extend(more);
    }
    v
}

/// Splits a shell command line into words (single and double quotes, backslash
/// continuations already joined).
pub fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// The routemu commands of a page's code (indented or fenced blocks): `routemu ...` or
/// `cargo run --release -- ...`, continuation lines joined, trailing `# comments` cut;
/// synopsis lines (with `<` or `[`), shell pipelines and printed output (`routemu
/// sweep: …`) are not commands to run.
fn commands(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        if raw.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let code = fenced || raw.starts_with("    ");
        if !code {
            pending = None;
            continue;
        }
        let line = raw.trim();
        let (start, joined) = match pending.take() {
            Some((n, s)) => (n, format!("{s} {line}")),
            None => (i + 1, line.to_string()),
        };
        if let Some(rest) = joined.strip_suffix('\\') {
            pending = Some((start, rest.trim_end().to_string()));
            continue;
        }
        // A comment: ` # ` outside quotes is how the pages annotate commands.
        let cmd = joined.split(" # ").next().unwrap().trim();
        let cmd = cmd
            .strip_prefix("cargo run --release -- ")
            .map(|r| format!("routemu {r}"))
            .unwrap_or_else(|| cmd.to_string());
        // `routemu sweep: …` is a printed summary, not a command.
        let printed = cmd
            .split_whitespace()
            .nth(1)
            .is_some_and(|w| w.ends_with(':'));
        if !cmd.starts_with("routemu ")
            || printed
            || cmd.contains('<')
            || cmd.contains('[')
            || cmd.contains('|')
            || cmd.contains("...")
        {
            continue;
        }
        out.push((start, words(&cmd)));
    }
    out
}

/// Checks one parsed command the way it would start: its configuration built and
/// validated, its input files present.
fn check(cli: Cli) -> Result<(), String> {
    let validate = |cfg: routemu::foundation::error::Result<routemu::config::HwConfig>| {
        cfg.and_then(|c| routemu::engine::machine::validate(&c).map(|_| ()))
            .map_err(|e| e.to_string())
    };
    match cli.command {
        Command::Run(a) => validate(a.exp.config()),
        Command::Predict(a) | Command::Compare(a) => validate(a.exp.config()),
        Command::Sweep(a) => validate(a.exp.config()),
        Command::Saturation(a) => validate(a.exp.config()),
        Command::Replay(a) => {
            if !root().join(&a.trace).exists()
                && !root().join(a.trace.with_extension("meta")).exists()
            {
                return Err(format!("trace {} does not exist", a.trace.display()));
            }
            let base = routemu::config::load::load_hw(&root().join(&a.hw));
            validate(base.and_then(|b| routemu::config::overrides::apply_overrides(&b, &a.set)))
        }
        Command::Check { file, set } => {
            let base = routemu::config::load::load_hw(&root().join(file));
            validate(base.and_then(|b| routemu::config::overrides::apply_overrides(&b, &set)))
        }
        Command::Bench(_) => Ok(()),
        #[allow(unreachable_patterns)]
        _ => Ok(()),
    }
}

#[test]
fn every_documented_command_is_accepted() {
    let mut seen = 0;
    let mut failures = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        for (line, argv) in commands(&text) {
            seen += 1;
            let result = match Cli::try_parse_from(&argv) {
                Err(e) => Err(e.to_string()),
                Ok(cli) => {
                    // Parsing is relative to the repository root, as the pages assume.
                    let _cwd = std::env::set_current_dir(root());
                    check(cli)
                }
            };
            if let Err(e) = result {
                failures.push(format!("{name}:{line}: `{}`: {e}", argv.join(" ")));
            }
        }
    }
    assert!(
        seen >= 20,
        "only {seen} commands found: the extraction broke"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn documented_check_and_predict_commands_run_to_completion() {
    let mut ran = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (line, argv) in commands(&text) {
            if !matches!(argv.get(1).map(String::as_str), Some("check" | "predict")) {
                continue;
            }
            let args: Vec<&str> = argv[1..]
                .iter()
                .map(String::as_str)
                .filter(|a| !a.ends_with(".json"))
                .collect();
            let out = common::routemu(&args);
            assert!(
                out.status.success(),
                "{}:{line}: `{}`: {}",
                page.display(),
                argv.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
            ran += 1;
        }
    }
    assert!(ran >= 2, "only {ran} check/predict commands found");
}

/// Lines of a page outside code blocks.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push((i + 1, l));
        }
    }
    out
}

#[test]
fn every_table_renders() {
    let mut failures = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        let lines = prose(&text);
        for w in lines.windows(3) {
            let [(_, a), (n, b), (_, c)] = [w[0], w[1], w[2]];
            let row = |s: &str| s.trim_start().starts_with('|');
            let separator = |s: &str| {
                let t = s.trim();
                t.starts_with('|') && t.chars().all(|c| "|-: ".contains(c))
            };
            // A blank line between two rows splits a table: the second part renders as
            // text unless it is a new table (a header followed by its separator).
            if row(a) && b.trim().is_empty() && row(c) {
                let next_is_header = lines
                    .iter()
                    .find(|(m, _)| *m == n + 2)
                    .is_some_and(|(_, l)| separator(l));
                if !next_is_header {
                    failures.push(format!("{name}:{n}: a blank line inside a table"));
                }
            }
            // A row whose cell count differs from its header's renders misaligned.
            if row(a) && separator(b) {
                let cells = |s: &str| {
                    s.replace("\\|", "")
                        .trim()
                        .trim_matches('|')
                        .split('|')
                        .count()
                };
                let cols = cells(a);
                if cells(b) != cols {
                    failures.push(format!(
                        "{name}:{n}: the separator has {} columns, the header {cols}",
                        cells(b)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

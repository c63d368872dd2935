//! The layers hold: no `crate::` import points up a layer, and the top-level folders of
//! one layer do not import each other in a circle. The layers are read from the table
//! in docs/layout.md (one row per layer, its folders in backquotes), the imports from
//! every file under src/ (paths spelt from the crate root, never `super::`; comments,
//! strings and test modules are not imports). Test only.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layer number of each top-level folder, from docs/layout.md's table.
fn layers() -> BTreeMap<String, usize> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/layout.md");
    let text = std::fs::read_to_string(&doc).expect("docs/layout.md");
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | N name | `folder`, `folder` | what |
        let Some(n) = cells
            .get(1)
            .and_then(|c| c.split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        for f in cells[2].split('`').skip(1).step_by(2) {
            assert!(
                out.insert(f.to_string(), n).is_none(),
                "{f} is in two layers"
            );
        }
    }
    assert!(out.len() > 10, "docs/layout.md lists the layers");
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `text` without comments, string and char literals, and the test module.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let rest = |k: usize| b.get(i + k).copied();
        match b[i] {
            '/' if rest(1) == Some('/') => {
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
            }
            '/' if rest(1) == Some('*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == '*' && b[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            '"' => {
                i += 1;
                while i < b.len() && b[i] != '"' {
                    i += if b[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
            }
            // A char literal ('x', '\n', '"'), not a lifetime.
            '\'' if rest(2) == Some('\'') || (rest(1) == Some('\\') && rest(3) == Some('\'')) => {
                i += if rest(1) == Some('\\') { 4 } else { 3 };
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// The top-level modules named by `crate::x` paths in `code`.
fn imported(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + 7..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

#[test]
fn no_import_points_up_a_layer_or_closes_a_circle_between_folders() {
    let layer = layers();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut up = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        let top = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("a path")
            .trim_end_matches(".rs")
            .to_string();
        if ["lib", "main", "layer_rules"].contains(&top.as_str()) {
            continue;
        }
        let mine = *layer
            .get(&top)
            .unwrap_or_else(|| panic!("src/{top} is in no layer of docs/layout.md"));
        let text = std::fs::read_to_string(f).expect("source");
        let code = code(&text);
        // Paths to other modules are spelt from the crate root, so that every import is
        // seen here (a test module's `super::` aside, which the code above leaves out).
        if code.contains("super::") {
            up.push(format!(
                "{} reaches a module through super::",
                rel.display()
            ));
        }
        for m in imported(&code) {
            let Some(&theirs) = layer.get(&m) else {
                continue;
            };
            if theirs > mine {
                up.push(format!(
                    "{} (layer {mine}) imports crate::{m} (layer {theirs})",
                    rel.display()
                ));
            }
            if m != top {
                edges.entry(top.clone()).or_default().insert(m);
            }
        }
    }
    assert!(up.is_empty(), "imports that point up:\n{}", up.join("\n"));
    // A circle needs an edge within a layer; find one by depth-first search.
    fn circle(
        at: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == at) {
            let mut c = path[i..].to_vec();
            c.push(at.to_string());
            return Some(c);
        }
        path.push(at.to_string());
        for next in edges.get(at).into_iter().flatten() {
            if let Some(c) = circle(next, edges, path) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    for top in edges.keys() {
        if let Some(c) = circle(top, &edges, &mut Vec::new()) {
            panic!(
                "folders that import each other in a circle: {}",
                c.join(" → ")
            );
        }
    }
}

#[test]
fn the_rules_see_imports_and_not_what_only_looks_like_them() {
    let text = "use crate::engine::sim;\n// crate::cli in a comment\nlet s = \"crate::cli\";\n\
                let c = '\"'; fn f() { crate::stats::report::x() }\n\
                #[cfg(test)]\nmod tests { use crate::cli; }";
    let got = imported(&code(text));
    let want: BTreeSet<String> = ["engine", "stats"].iter().map(|s| s.to_string()).collect();
    assert_eq!(got, want);
    // Not a path from the crate root.
    assert!(imported("my_crate::cli").is_empty());
}

//! Records the git commit routemu is built from (`ROUTEMU_COMMIT`: the hash, with
//! `-dirty` when tracked files differ from it, or `unknown` outside a git checkout), so
//! every JSON a run writes can say which code produced it.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    // `git status` refreshes the index it reads and writes it back, which this script
    // watches: without --no-optional-locks every build would leave the next one stale.
    let out = Command::new("git")
        .arg("--no-optional-locks")
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = match git(&["rev-parse", "HEAD"]) {
        Some(hash) if !hash.is_empty() => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{hash}-dirty")
            } else {
                hash
            }
        }
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=ROUTEMU_COMMIT={commit}");
    // A new commit or a change to the index or the sources changes the answer. (Listing
    // paths replaces cargo's default of rerunning on any change in the package.)
    for p in ["HEAD", "index"] {
        if let Some(path) = git(&["rev-parse", "--git-path", p]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(path) = git(&["rev-parse", "--git-path", &head_ref]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    for p in ["src", "Cargo.toml", "build.rs"] {
        println!("cargo:rerun-if-changed={p}");
    }
}

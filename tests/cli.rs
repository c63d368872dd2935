//! The `routemu` command as a user runs it (most tests start the built binary): bad
//! input and its exit statuses, refusals and limits, the memory estimate behind them,
//! output files and signals, `compare`, `sweep`, `plot` and `predict`, the units of
//! `--load`, the provenance of every JSON document, and the commands the documentation
//! shows.
//!
//! One test binary for these files (tests/cli/*.rs), so that `cargo test` links the crate
//! once for all of them; docs/testing.md lists the binaries.

mod common;

#[path = "cli/bad_input.rs"]
mod bad_input;
#[path = "cli/compare.rs"]
mod compare;
#[path = "cli/deadlock_exits.rs"]
mod deadlock_exits;
#[path = "cli/docs.rs"]
mod docs;
#[path = "cli/limits.rs"]
mod limits;
// Installs the counting allocator for this whole binary; its test measures in a process
// of its own (see the module).
#[path = "cli/memory_estimate.rs"]
mod memory_estimate;
#[path = "cli/outputs.rs"]
mod outputs;
#[path = "cli/plot.rs"]
mod plot;
#[path = "cli/predict.rs"]
mod predict;
#[path = "cli/provenance.rs"]
mod provenance;
#[path = "cli/sweep.rs"]
mod sweep;
#[path = "cli/units.rs"]
mod units;

/// The README tour's figures: `docs/tour/render.sh` renders one of each kind (latency
/// against load with the model, accepted against offered load, a time series, a heat
/// map) as PNG; with small settings here, into a temporary directory.
mod tour {
    use std::process::Command;

    /// The (width, height) of a PNG, or why it is not one.
    fn png_size(bytes: &[u8]) -> Result<(u32, u32), String> {
        if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" || &bytes[12..16] != b"IHDR" {
            return Err("not a PNG".into());
        }
        let be =
            |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        Ok((be(16), be(20)))
    }

    #[test]
    fn the_tour_script_renders_every_figure_as_a_png_of_the_committed_size() {
        let root = env!("CARGO_MANIFEST_DIR");
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("sh")
            .arg("docs/tour/render.sh")
            .arg(dir.path())
            .env("ROUTEMU", env!("CARGO_BIN_EXE_routemu"))
            .env("TOUR_QUICK", "1")
            .current_dir(root)
            .output()
            .expect("sh runs");
        assert!(
            out.status.success(),
            "render.sh: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let figure = routemu::presentation::plot::png::png_size();
        for name in [
            "latency-vs-load.png",
            "accepted-vs-offered.png",
            "time-series.png",
            "heatmap.png",
        ] {
            let drawn =
                std::fs::read(dir.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            let size = png_size(&drawn).unwrap_or_else(|e| panic!("{name}: {e}"));
            // The README shows the committed figure: the same kind, the same size.
            let committed = std::fs::read(format!("{root}/docs/figures/{name}")).unwrap();
            assert_eq!(Ok(size), png_size(&committed), "{name}");
            if name != "heatmap.png" {
                assert_eq!(size, figure, "{name}");
            }
        }
    }
}

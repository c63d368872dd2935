//! `routemu plot`: redraws a CSV — a sweep's, recognised by its `_measured`/`_ci95`/
//! `_model` column groups and its `saturated` flag, or any numeric CSV such as a time
//! series — as SVG or PNG figures, one per y quantity, without emulating again.
//!
//! Not here: what is drawn from which column (`presentation::plot::redraw`), drawing.

use crate::cli::output::{check_outputs, write_bytes};
use crate::foundation::error::{Error, Result};
use crate::presentation::plot::csv::Table;
use crate::presentation::plot::png::{encode, Format};
use crate::presentation::plot::redraw::{figures, Spec};
use crate::presentation::plot::Figure;
use clap::Args;
use std::io::Read;

/// `routemu plot` arguments.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The CSV file (`-`: standard input).
    pub file: String,
    /// The x column (default: a sweep's first numeric axis, a time series' `start`, …;
    /// see docs/figures.md); `offered`: a sweep's measured offered load. A column of
    /// names draws grouped bars.
    #[arg(long, value_name = "COLUMN")]
    pub x: Option<String>,
    /// A quantity to draw, one figure each (repeatable): a sweep's quantity (`latency`,
    /// `throughput.accepted`: its `_measured`, `_ci95` and `_model` columns) or any
    /// numeric column. Default: the first with a value.
    #[arg(long = "y", value_name = "QUANTITY")]
    pub ys: Vec<String>,
    /// A column whose values tell series apart (repeatable; default for a sweep: its
    /// other axes, less those that vary with x).
    #[arg(long = "series", value_name = "COLUMN", conflicts_with = "no_series")]
    pub series: Vec<String>,
    /// One series: every row on one curve.
    #[arg(long)]
    pub no_series: bool,
    /// Logarithmic x axis (values ≤ 0 are left out).
    #[arg(long)]
    pub log_x: bool,
    /// Logarithmic y axis (values ≤ 0 are left out).
    #[arg(long)]
    pub log_y: bool,
    /// Figure title (default: what the figure shows, "Y vs X").
    #[arg(long)]
    pub title: Option<String>,
    /// Where to write: FILE.svg, FILE.png or `-` (SVG on standard output); with several
    /// `--y`, one file each, named FILE-Y.svg. Default: the CSV's name with `.svg`.
    #[arg(long, value_name = "FILE.svg|FILE.png|-")]
    pub out: Option<String>,
}

/// The file of each figure: `dest` itself for one figure, else `STEM-NAME.EXT` per
/// figure (characters other than letters, digits, `.`, `_` and `-` in NAME become `_`).
pub fn figure_paths(dest: &str, names: &[String]) -> Result<Vec<String>> {
    if names.len() <= 1 {
        return Ok(vec![dest.to_string()]);
    }
    if dest == "-" {
        return Err(Error::Arg(
            "several figures cannot all go to standard output: give a file name".into(),
        ));
    }
    let (stem, ext) = match dest.rfind('.') {
        Some(i) if !dest[i..].contains('/') => (&dest[..i], &dest[i..]),
        _ => (dest, ".svg"),
    };
    Ok(names
        .iter()
        .map(|n| {
            let safe: String = n
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "._-".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            format!("{stem}-{safe}{ext}")
        })
        .collect())
}

/// Encodes every figure for its file (all before any is written, so a failure leaves no
/// file behind), then writes them.
pub fn write_figures(dest: &str, figs: &[(String, Figure)]) -> Result<Vec<String>> {
    let names: Vec<String> = figs.iter().map(|(n, _)| n.clone()).collect();
    let paths = figure_paths(dest, &names)?;
    let encoded = figs
        .iter()
        .zip(&paths)
        .map(|((_, f), p)| encode(f, Format::of(p)))
        .collect::<Result<Vec<_>>>()?;
    for (p, bytes) in paths.iter().zip(&encoded) {
        write_bytes(p, bytes)?;
    }
    Ok(paths)
}

/// Runs `routemu plot`; returns the exit status.
pub fn plot(a: &PlotArgs) -> Result<i32> {
    let text = if a.file == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|source| Error::Io {
                path: "<stdin>".into(),
                source,
            })?;
        s
    } else {
        crate::foundation::inputs::read_to_string(std::path::Path::new(&a.file)).map_err(
            |source| Error::Io {
                path: a.file.clone(),
                source,
            },
        )?
    };
    let table = Table::parse(&text, &a.file)?;
    let spec = Spec {
        x: a.x.clone(),
        ys: a.ys.clone(),
        series: if a.no_series {
            Some(Vec::new())
        } else if a.series.is_empty() {
            None
        } else {
            Some(a.series.clone())
        },
        log_x: a.log_x,
        log_y: a.log_y,
        title: a.title.clone().unwrap_or_default(),
        context: String::new(),
    };
    let dest = match &a.out {
        Some(o) => o.clone(),
        None if a.file == "-" => "-".into(),
        None => {
            let p = std::path::Path::new(&a.file);
            p.with_extension("svg").to_string_lossy().to_string()
        }
    };
    let figs = figures(&table, &spec)?;
    let names: Vec<String> = figs.iter().map(|(n, _)| n.clone()).collect();
    let paths = figure_paths(&dest, &names)?;
    // Redrawing over its own input would leave nothing to redraw from: the CSV is an
    // input (`foundation::inputs`), which no output may be.
    check_outputs(
        &paths
            .iter()
            .map(|p| ("--out", p.as_str()))
            .collect::<Vec<_>>(),
    )?;
    for p in write_figures(&dest, &figs)? {
        if p != "-" {
            eprintln!("routemu plot: wrote {p}");
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_figures_get_one_file_each_named_after_their_quantity() {
        let one = figure_paths("out/f.png", &["latency".into()]).unwrap();
        assert_eq!(one, ["out/f.png"]);
        let two = figure_paths(
            "out/f.png",
            &["latency".into(), "throughput.accepted".into()],
        )
        .unwrap();
        assert_eq!(two, ["out/f-latency.png", "out/f-throughput.accepted.png"]);
        assert_eq!(
            figure_paths("a.b/f", &["x y".into(), "z".into()]).unwrap(),
            ["a.b/f-x_y.svg", "a.b/f-z.svg"]
        );
        assert!(figure_paths("-", &["a".into(), "b".into()]).is_err());
    }
}

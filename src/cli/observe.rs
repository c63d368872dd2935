//! The measurement flags of `routemu run` and `routemu replay` (docs/measurements.md):
//! which measurements in space and time to take (they become `experiment.observe`) and
//! the files to write them to.
//! Rendering is `stats::{latency_dist, msglog, heatmap}`'s; this module checks the flags
//! before the run, so a long run never ends on a bad flag, and renders every file before
//! writing any, so a failure leaves nothing half-written.

use crate::cli::output::{
    check_outputs, json_document, write_bytes, write_csv, write_output, Output,
};
use crate::config::HwConfig;
use crate::experiments::experiment::Extras;
use crate::foundation::error::{Error, Result};
use crate::presentation::heatmap::{self, Quantity};
use crate::presentation::plot::png::{svg_to_png, Format};
use crate::stats::msglog::RepLog;
use crate::stats::msglog::{self, LatencyRule};
use crate::stats::observe::{self, SeriesRow};
use crate::stats::report::Report;
use crate::topology::Topology;
use clap::Args;

/// Measurements in space and time, and where to write them (`-`: standard output).
#[derive(Debug, Args, Clone, Default)]
pub struct ObserveArgs {
    /// Per-link and per-router arrays in the JSON report (`links`, `link_totals`,
    /// `routers`).
    #[arg(long)]
    pub per_link: bool,
    /// List at most N links (and routers) in the JSON, the busiest (default 16384).
    #[arg(long, value_name = "N")]
    pub max_links: Option<u32>,
    /// Draw the links, coloured by --heatmap-quantity, on the topology (SVG, or PNG
    /// when FILE ends in .png; implies --per-link).
    #[arg(long, value_name = "FILE.svg|FILE.png|-")]
    pub heatmap: Option<String>,
    /// What colours the heat map: utilization, flits, headers, blocking,
    /// blocking-per-header.
    #[arg(long, value_name = "Q", default_value = "utilization")]
    pub heatmap_quantity: String,
    /// A time series with intervals of C cycles (`series` in the JSON): accepted
    /// throughput, mean latency and backlog per interval, warm-up included.
    #[arg(long, value_name = "C")]
    pub interval: Option<u64>,
    /// Write the time series as CSV (needs --interval).
    #[arg(long, value_name = "FILE|-")]
    pub series: Option<String>,
    /// Write the latency distribution (histogram and CDF of the latency and its
    /// phases): JSON when FILE ends in .json, CSV otherwise.
    #[arg(long, value_name = "FILE|-")]
    pub latency_dist: Option<String>,
    /// Write one CSV line per delivered message (every replication, warm-up included):
    /// times, hops, blocking, path. (`--messages N` is the measurement window's length.)
    #[arg(long, value_name = "FILE|-")]
    pub message_log: Option<String>,
}

impl ObserveArgs {
    /// Sets `experiment.observe` from the flags (flags only add to the file's settings).
    pub fn apply(&self, cfg: &mut HwConfig) -> Result<()> {
        let o = &mut cfg.experiment.observe;
        if self.per_link || self.heatmap.is_some() {
            o.per_link = true;
        }
        if let Some(m) = self.max_links {
            if m == 0 {
                return Err(Error::Arg("--max-links 0: list at least one link".into()));
            }
            o.max_links = Some(m);
        }
        if let Some(c) = self.interval {
            if c == 0 {
                return Err(Error::Arg(
                    "--interval 0: an interval holds at least one cycle".into(),
                ));
            }
            o.interval = Some(c);
        }
        if self.series.is_some() && o.interval.is_none() {
            return Err(Error::Arg(
                "--series needs --interval C (the interval's length in cycles)".into(),
            ));
        }
        if self.message_log.is_some() {
            o.message_log = true;
        }
        self.quantity()?;
        Ok(())
    }

    fn quantity(&self) -> Result<Quantity> {
        self.heatmap_quantity.parse()
    }

    /// The output files these flags name, with their flags.
    fn outputs(&self) -> Vec<(&'static str, &str)> {
        [
            ("--heatmap", &self.heatmap),
            ("--series", &self.series),
            ("--latency-dist", &self.latency_dist),
            ("--message-log", &self.message_log),
        ]
        .into_iter()
        .filter_map(|(f, d)| Some((f, d.as_deref()?)))
        .collect()
    }

    /// Whether any output of these flags goes to standard output.
    pub fn uses_stdout(&self) -> bool {
        self.outputs().iter().any(|(_, d)| *d == "-")
    }

    /// Checks, before the run, that the files can be written and that at most one
    /// output (`json` included) goes to standard output.
    pub fn check(&self, json: Option<&str>, topo: &Topology) -> Result<()> {
        self.check_with(json.map(|j| ("--json", j)).into_iter().collect(), topo)
    }

    /// As [`ObserveArgs::check`], with the command's other output files.
    pub fn check_with<'a>(
        &'a self,
        mut all: Vec<(&'a str, &'a str)>,
        topo: &Topology,
    ) -> Result<()> {
        all.extend(self.outputs());
        check_outputs(&all)?;
        if self.heatmap.is_some() {
            let links = topo.channels();
            if links > heatmap::MAX_DRAWN_LINKS {
                return Err(Error::Arg(format!(
                    "--heatmap: this network has {links} links; a heat map draws at most {} \
                     (use --per-link and the JSON's `links` for bigger networks)",
                    heatmap::MAX_DRAWN_LINKS
                )));
            }
        }
        Ok(())
    }

    /// Renders every file these flags ask for: (destination, content), in flag order.
    pub fn render(
        &self,
        cfg: &HwConfig,
        topo: &Topology,
        report: &Report,
        extras: &mut Extras,
    ) -> Result<Vec<(String, Rendered)>> {
        let context = format!(
            "at {:.4} flits/{}/cycle offered",
            report.throughput.offered,
            topo.endpoint_noun()
        );
        let series = report.series.as_deref().unwrap_or(&[]);
        self.render_with(cfg, topo, (&context, report.replications), series, extras)
    }

    /// As [`ObserveArgs::render`] for any command's measurements: the heat map's title
    /// ends with `context` (what ran) and counts `replications`; `series` is the time
    /// series' rows.
    pub fn render_with(
        &self,
        cfg: &HwConfig,
        topo: &Topology,
        (context, replications): (&str, u32),
        series: &[SeriesRow],
        extras: &mut Extras,
    ) -> Result<Vec<(String, Rendered)>> {
        let mut out = Vec::new();
        if let Some(dest) = &self.heatmap {
            let totals = extras.link_totals.clone().unwrap_or_default();
            let q = self.quantity()?;
            let title = format!(
                "{} — {} {context}{}",
                if cfg.name.is_empty() {
                    "routemu"
                } else {
                    &cfg.name
                },
                match q {
                    Quantity::Utilization => "link utilisation",
                    Quantity::Flits => "flits carried",
                    Quantity::Headers => "headers per link",
                    Quantity::Blocking => "header blocking",
                    Quantity::BlockingPerHeader => "blocking per header",
                },
                crate::cli::output::partial_title(),
            );
            let svg = heatmap::svg(topo, &extras.links, &totals, q, &title, replications)?;
            // FILE.png: the same drawing rasterised, as for every figure.
            let file = match Format::of(dest) {
                Format::Png => Rendered::Bytes(svg_to_png(&svg)?),
                Format::Svg => Rendered::Text(svg),
            };
            out.push((dest.clone(), file));
        }
        if let Some(dest) = &self.series {
            out.push((dest.clone(), Rendered::Csv(observe::series_csv(series))));
        }
        if let Some(dest) = &self.latency_dist {
            // A JSON file is a document like every other routemu JSON (provenance first).
            let file = if dest.to_ascii_lowercase().ends_with(".json") {
                Rendered::Text(json_document(&extras.latency.doc()))
            } else {
                Rendered::Csv(extras.latency.csv())
            };
            out.push((dest.clone(), file));
        }
        if let Some(dest) = &self.message_log {
            // Formatted as it is written (see `Rendered::MessageLog`).
            let log = MessageLog {
                reps: std::mem::take(&mut extras.messages),
                topo: topo.clone(),
                rule: LatencyRule {
                    def: cfg.experiment.latency,
                    ejection: cfg.router.ni.ejection_latency,
                },
            };
            out.push((dest.clone(), Rendered::MessageLog(Box::new(log))));
        }
        Ok(out)
    }

    /// Writes rendered files (each atomically).
    pub fn write(files: &mut [(String, Rendered)]) -> Result<()> {
        for (dest, file) in files {
            match file {
                Rendered::Text(text) => write_output(dest, text)?,
                Rendered::Bytes(bytes) => write_bytes(dest, bytes)?,
                Rendered::Csv(text) => write_csv(dest, text)?,
                Rendered::MessageLog(log) => {
                    let mut out = Output::create(dest)?.csv();
                    msglog::write(&mut log.reps, &log.topo, log.rule, &mut |b: &[u8]| {
                        out.write_all(b)
                    })?;
                    out.finish()?;
                }
            }
        }
        Ok(())
    }
}

/// A file rendered for writing.
#[derive(Debug)]
pub enum Rendered {
    /// Its whole text.
    Text(String),
    /// Its bytes (a PNG).
    Bytes(Vec<u8>),
    /// A CSV table's whole text (marked partial after a signal).
    Csv(String),
    /// The per-message log, formatted a block of lines at a time as it is written: its
    /// text is never held whole (it is the largest file by far: a line per message).
    MessageLog(Box<MessageLog>),
}

/// What the per-message log is formatted from.
#[derive(Debug)]
pub struct MessageLog {
    /// Every replication's deliveries and hops.
    pub reps: Vec<RepLog>,
    /// The network (for the distance column).
    pub topo: Topology,
    /// The latency column's definition.
    pub rule: LatencyRule,
}

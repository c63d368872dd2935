//! The flags the user typed, by the configuration path each one sets, so that an error
//! the engine raises about a configuration field (`experiment.threads = 0: …`) also names
//! the flag it came from (`--threads 0`, `--set …`, a sweep's `--param …`). The engine
//! validates configurations and knows nothing of the command line; this module is the one
//! place that maps back.
//!
//! Not here: parsing the flags (`cli::ExperimentArgs`, `cli::spec`), validation
//! (`engine::machine`).

use crate::cli::ExperimentArgs;
use crate::foundation::error::Error;

/// The typed flags of one command line: configuration path → the flag as typed.
#[derive(Clone, Debug, Default)]
pub struct Typed(Vec<(String, String)>);

impl Typed {
    /// The flags of the shared machine and workload selection.
    pub fn of_experiment(a: &ExperimentArgs) -> Typed {
        let mut t = Typed::default();
        let mut add = |path: &str, flag: &str, v: Option<String>| {
            if let Some(v) = v {
                t.add(path, format!("{flag} {v}"));
            }
        };
        add("workload.rate", "--rate", a.rate.map(|x| x.to_string()));
        add("workload.rate", "--load", a.load.map(|x| x.to_string()));
        add("workload.length", "--length", a.length.clone());
        add("workload.pattern", "--pattern", a.pattern.clone());
        add("experiment.seed", "--seed", a.seed.map(|x| x.to_string()));
        add(
            "experiment.replications",
            "--replications",
            a.replications.map(|x| x.to_string()),
        );
        add(
            "experiment.warmup",
            "--warmup",
            a.warmup.map(|x| x.to_string()),
        );
        add(
            "experiment.measure",
            "--cycles",
            a.cycles.map(|x| x.to_string()),
        );
        add(
            "experiment.measure",
            "--messages",
            a.messages.map(|x| x.to_string()),
        );
        add(
            "experiment.threads",
            "--threads",
            a.threads.map(|x| x.to_string()),
        );
        add("experiment.jobs", "--jobs", a.jobs.map(|x| x.to_string()));
        t.add_overrides("--set", &a.set);
        t
    }

    /// Adds one flag, as typed, that set the field at `path`.
    pub fn add(&mut self, path: &str, typed: String) {
        self.0.push((path.into(), typed));
    }

    /// Adds `PATH=VALUE` overrides typed with `flag` (`--set`, a sweep's `--param`); the
    /// later of two flags on one path is the one that took effect, so it is named.
    pub fn add_overrides(&mut self, flag: &str, sets: &[String]) {
        for s in sets {
            if let Some((path, _)) = s.split_once('=') {
                self.0.push((path.trim().into(), format!("{flag} {s}")));
            }
        }
    }

    /// `e` with the flag that set the field it is about named, when the message is about
    /// a configuration field a typed flag set and does not name that flag already.
    pub fn name(&self, e: Error) -> Error {
        let Error::Config(msg) = e else {
            return e;
        };
        let about = |path: &str| {
            msg.strip_prefix(path)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '.', ':', '=']))
        };
        // The most specific path first (`--set workload.pattern.fraction=2` over
        // `--pattern`), then the flag given last.
        let best = self
            .0
            .iter()
            .enumerate()
            .filter(|(_, (path, _))| about(path))
            .max_by_key(|(i, (path, _))| (path.len(), *i));
        match best {
            Some((_, (_, flag)))
                if !msg.contains(flag.split_whitespace().next().unwrap_or_default()) =>
            {
                Error::Config(format!("{msg} (from {flag})"))
            }
            _ => Error::Config(msg),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn typed(args: &[&str]) -> Typed {
        #[derive(Parser)]
        struct P {
            #[command(flatten)]
            exp: ExperimentArgs,
        }
        let mut v = vec!["x", "hw.ron"];
        v.extend(args);
        Typed::of_experiment(&P::parse_from(v).exp)
    }

    #[test]
    fn a_field_error_names_the_flag_that_set_the_field() {
        let t = typed(&["--threads", "0", "--pattern", "hotspot:3:2"]);
        let e = t.name(Error::Config(
            "experiment.threads = 0: at least one thread".into(),
        ));
        assert!(e.to_string().ends_with("(from --threads 0)"), "{e}");
        let e = t.name(Error::Config(
            "workload.pattern.fraction = 2: must be in [0, 1]".into(),
        ));
        assert!(
            e.to_string().ends_with("(from --pattern hotspot:3:2)"),
            "{e}"
        );
    }

    #[test]
    fn the_most_specific_override_wins_and_a_named_flag_is_not_repeated() {
        let t = typed(&[
            "--pattern",
            "hotspot:3:0.5",
            "--set",
            "workload.pattern.fraction=2",
            "--replications",
            "0",
        ]);
        let e = t.name(Error::Config("workload.pattern.fraction = 2: bad".into()));
        assert!(
            e.to_string()
                .ends_with("(from --set workload.pattern.fraction=2)"),
            "{e}"
        );
        let msg = "experiment.replications = 0 (--replications): run 1 to 100000";
        assert_eq!(
            t.name(Error::Config(msg.into())).to_string(),
            format!("invalid configuration: {msg}")
        );
        // Neither a field nobody typed nor another kind of error is touched.
        let e = t.name(Error::Config("topology.k = 1: too small".into()));
        assert!(!e.to_string().contains("from"), "{e}");
        let e = t.name(Error::Arg("experiment.threads".into()));
        assert!(!e.to_string().contains("from"), "{e}");
    }
}

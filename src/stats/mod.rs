//! Measurement: statistics from what replications accumulated (the kernel's probes,
//! `engine::probe`): means and confidence intervals across replications, the JSON report
//! and human summary ([`report`]), the measurements in space and time ([`observe`]), the
//! latency distribution ([`latency_dist`]) and the per-message log ([`msglog`]).

pub mod latency_dist;
pub mod msglog;
pub mod observe;
pub mod report;

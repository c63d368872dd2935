//! The command line under `mpirun -np R routemu …` (feature `mpi`): MPI started on the
//! main thread, every emulation of the command split over the R ranks
//! (`engine::distributed`), rank 0 alone writing outputs, summaries and progress.
//!
//! Failures: an error every rank meets alike (a bad configuration, a bad argument, a
//! deadlock) ends every rank the same way, with the usual exit status and rank 0's
//! message. An error one rank may meet alone (memory, a file, the exchange) is told by
//! that rank and ends every rank through `MPI_Abort` with the error's exit status (the
//! others may be waiting for it in a collective); so does a panic on any rank.

use crate::cli::output;
use crate::engine::distributed::mpi::{self, Started};
use crate::engine::transport::{with_transport, Transport};
use crate::foundation::error::Error;
use std::sync::Arc;

/// Runs the command line as one rank of an MPI run; returns the exit status.
pub fn main_mpi(cli: crate::cli::Cli) -> i32 {
    let Some(Started {
        transport,
        universe,
    }) = mpi::start()
    else {
        output::eprint("routemu: MPI could not be initialised with funneled threads\n");
        return 1;
    };
    let t = Arc::new(transport);
    let ranks = t.ranks();
    let rank = t.rank();
    let on_panic = t.clone();
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        eprintln!("routemu: rank {rank} of {ranks} panicked; ending every rank");
        on_panic.abort(101);
    }));
    let dynt: Arc<dyn Transport> = t.clone();
    let (code, alone) = with_transport(dynt, || {
        let result = same_command_line(t.as_ref()).and_then(|()| crate::cli::run_command(cli));
        let alone = matches!(&result, Err(e) if met_alone(e));
        if alone && rank != 0 {
            // Rank 0's message would not tell this rank's failure.
            eprintln!(
                "routemu: rank {rank} of {ranks}: {}",
                result.as_ref().err().unwrap()
            );
        }
        (crate::cli::exit_status(result), alone)
    });
    if alone && ranks > 1 {
        t.abort(code);
    }
    if std::env::var_os("ROUTEMU_MPI_STATS").is_some() {
        let st = t.stats();
        eprintln!(
            "routemu: rank {rank} of {ranks}: {} exchanges, {} bytes sent, {:.3} s in them ({:.2} µs each)",
            st.exchanges,
            st.bytes,
            st.seconds,
            1e6 * st.seconds / st.exchanges.max(1) as f64
        );
    }
    drop(universe);
    code
}

/// Refuses to start when the ranks were given different command lines (a rank with
/// another seed, cycle count or command would compute another result, or wait for the
/// others for ever); names the first argument that differs. Every rank calls it first.
fn same_command_line(t: &dyn Transport) -> crate::foundation::error::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((r, first, theirs)) =
        crate::engine::transport::first_unlike_rank_0(t, args.join("\0").as_bytes())
    else {
        return Ok(());
    };
    let split = |b: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(b)
            .split('\0')
            .map(str::to_string)
            .collect()
    };
    let (a0, ar) = (split(&first), split(&theirs));
    let i = a0.iter().zip(&ar).take_while(|(x, y)| x == y).count();
    let show = |v: &[String]| {
        let from = i.saturating_sub(1);
        let end = (i + 2).min(v.len());
        if from >= end {
            "(nothing)".to_string()
        } else {
            format!("`{}`", v[from..end].join(" "))
        }
    };
    Err(Error::Agreed(format!(
        "the ranks of this MPI run were started with different command lines: rank {r} has \
         {} where rank 0 has {}; every rank must run the same command",
        show(&ar),
        show(&a0)
    )))
}

/// Whether one rank can meet `e` without the others (its memory, its files, what it
/// received): then the others may be waiting for it and must be ended.
fn met_alone(e: &Error) -> bool {
    matches!(
        e,
        Error::Limit(_) | Error::Io { .. } | Error::Distributed(_)
    ) && !output::is_broken_stdout(e)
}

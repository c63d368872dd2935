use clap::Parser;

/// Counts heap bytes so `routemu bench` can report memory per node.
#[global_allocator]
static ALLOC: routemu::bench::alloc::Counting = routemu::bench::alloc::Counting;

fn main() {
    let cli = routemu::cli::Cli::parse();
    #[cfg(feature = "mpi")]
    if routemu::engine::distributed::mpi::launched_by_mpirun() {
        std::process::exit(routemu::cli::mpi::main_mpi(cli));
    }
    std::process::exit(routemu::cli::main_with(cli));
}

//! `cargo bench`: the same scenarios as `routemu bench` (node-cycles per second, single
//! thread and partitioned, with the baselines measured in the same run).

#[global_allocator]
static ALLOC: routemu::bench::alloc::Counting = routemu::bench::alloc::Counting;

fn main() {
    let scale = std::env::var("ROUTEMU_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let args = routemu::cli::bench::BenchArgs {
        scale,
        repeats: 3,
        threads: 2,
        only: std::env::var("ROUTEMU_BENCH_ONLY").ok(),
        compare: std::env::var_os("ROUTEMU_BENCH_COMPARE").map(Into::into),
    };
    if let Err(e) = routemu::cli::bench::bench(&args) {
        eprintln!("bench failed: {e}");
        std::process::exit(1);
    }
}

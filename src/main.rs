use clap::Parser;

fn main() {
    let cli = routemu::cli::Cli::parse();
    std::process::exit(routemu::cli::main_with(cli));
}

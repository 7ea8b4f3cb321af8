//! braid-dp: braid's data-plane elements (see docs/dataplane.md).

mod cli;
mod common;
mod control;
mod device;
mod edge;
mod frame;
mod link;
mod net;
mod run;
mod tools;

use std::process::ExitCode;

use cli::Command;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match cli::parse_args(&args) {
        Ok(command) => command,
        Err(error) => {
            eprintln!("braid-dp: {error}\n(braid-dp --help shows the usage)");
            return ExitCode::from(2);
        }
    };
    let result = match command {
        Command::Help => {
            print!("{}", cli::USAGE);
            Ok(())
        }
        Command::Version => {
            println!("braid-dp {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Command::Link(options) => run::link(&options),
        Command::Blast(options) => run::blast(&options),
        Command::Edge(options) => run::edge(&options),
        Command::BenchReseq(options) => {
            println!("{}", tools::bench_reseq::bench(&options));
            Ok(())
        }
        Command::Probe(options) => run::probe(&options),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("braid-dp: {error}");
            ExitCode::from(2)
        }
    }
}

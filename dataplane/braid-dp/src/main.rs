//! braid-dp: braid's data-plane elements (see docs/dataplane.md).

mod blast;
mod cli;
mod config;
mod control;
mod control_server;
mod counters;
mod link;
mod loss;
mod packet_socket;
mod rate;
mod rng;
mod schedule;
mod shaper;

use std::process::ExitCode;
use std::sync::Arc;

use cli::{Command, LinkOptions};

fn run_link(options: &LinkOptions) -> Result<(), String> {
    let link = link::Link::open(&options.a, &options.b, &options.config)
        .map_err(|e| format!("opening {} and {}: {e} (root needed)", options.a, options.b))?;
    let listener = control_server::bind(&options.control)
        .map_err(|e| format!("control socket {}: {e}", options.control.display()))?;
    link.start(options.seed);
    // The caller waits for this line before it connects.
    println!(
        "braid-dp: forwarding {} <-> {}, control {}",
        options.a,
        options.b,
        options.control.display()
    );
    control_server::serve(listener, Arc::new(link));
    Ok(())
}

fn run_blast(options: &blast::BlastOptions) -> Result<(), String> {
    let report =
        blast::blast(options).map_err(|e| format!("blast on {}: {e}", options.interface))?;
    let summary = serde_json::json!({
        "sent": report.sent,
        "failed": report.failed,
        "seconds": report.seconds,
        "pps": report.sent as f64 / report.seconds,
    });
    println!("{summary}");
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match cli::parse_args(&args) {
        Ok(Command::Help) => {
            print!("{}", cli::USAGE);
            Ok(())
        }
        Ok(Command::Version) => {
            println!("braid-dp {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Ok(Command::Link(options)) => run_link(&options),
        Ok(Command::Blast(options)) => run_blast(&options),
        Err(error) => Err(format!("{error}\n(braid-dp --help shows the usage)")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("braid-dp: {error}");
            ExitCode::from(2)
        }
    }
}

//! braid-dp: braid's data-plane elements (see docs/dataplane.md).

mod cli;
mod common;
mod control;
mod edge;
mod frame;
mod link;
mod net;
mod tools;

use std::process::ExitCode;
use std::sync::Arc;

use cli::{Command, EdgeOptions, LinkOptions};
use control::server as control_server;
use tools::probe::{self, ProbeOptions};
use tools::{bench_reseq, blast};

fn run_link(options: &LinkOptions) -> Result<(), String> {
    let link = link::runtime::Link::open(&options.a, &options.b, &options.config, options.vlan)
        .map_err(|e| format!("opening {} and {}: {e} (root needed)", options.a, options.b))?;
    let listener = control_server::bind(&options.control)
        .map_err(|e| format!("control socket {}: {e}", options.control.display()))?;
    link.start(options.seed, options.realtime);
    // The caller waits for this line before it connects.
    println!(
        "braid-dp: forwarding {} <-> {}, control {}",
        options.a,
        options.b,
        options.control.display()
    );
    control_server::serve(listener, Arc::new(link::protocol::LinkHandler(link)));
    Ok(())
}

fn run_edge(options: &EdgeOptions) -> Result<(), String> {
    let config = match &options.config {
        None => edge::config::EdgeConfig::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("--config {}: {e}", path.display()))?;
            let value: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| format!("--config {}: not JSON ({e})", path.display()))?;
            edge::config::EdgeConfig::from_json(&value)
                .map_err(|e| format!("--config {}: {e}", path.display()))?
        }
    };
    let edge = edge::runtime::Edge::open(&options.host, &options.net, config).map_err(|e| {
        format!(
            "opening {} and {}: {e} (root needed)",
            options.host, options.net
        )
    })?;
    let edge = Arc::new(edge);
    let listener = control_server::bind(&options.control)
        .map_err(|e| format!("control socket {}: {e}", options.control.display()))?;
    edge::runtime::Edge::start(&edge);
    println!(
        "braid-dp: edge host {} <-> net {}, control {}",
        options.host,
        options.net,
        options.control.display()
    );
    control_server::serve(listener, Arc::new(edge::protocol::EdgeHandler(edge)));
    Ok(())
}

fn run_probe(options: &ProbeOptions) -> Result<(), String> {
    match options {
        ProbeOptions::Echo { port, seconds } => {
            probe::echo(*port, *seconds).map_err(|e| format!("probe echo on port {port}: {e}"))
        }
        ProbeOptions::Send {
            to,
            count,
            interval,
        } => {
            let rtts = probe::send(*to, *count, *interval)
                .map_err(|e| format!("probe send to {to}: {e}"))?;
            println!("{}", serde_json::json!(rtts));
            Ok(())
        }
    }
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
        Ok(Command::Edge(options)) => run_edge(&options),
        Ok(Command::BenchReseq(options)) => {
            println!("{}", bench_reseq::bench(&options));
            Ok(())
        }
        Ok(Command::Probe(options)) => run_probe(&options),
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

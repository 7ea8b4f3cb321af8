//! Command-line arguments of every command: `braid-dp link`, `edge`,
//! `blast`, `bench-reseq`, `probe echo` and `probe send`, `--help` and
//! `--version` (the usage below says what each takes).

use std::path::PathBuf;

use serde_json::{json, Map, Value};

use crate::link::config::{ConfigPatch, DirectionConfig};
use crate::tools::bench_reseq::BenchOptions;
use crate::tools::blast::{parse_mac, BlastOptions};

mod error;

use crate::tools::probe::ProbeOptions;
pub use error::CliError;

pub const USAGE: &str = "\
braid-dp: braid's data-plane elements

usage:
  braid-dp link --a IF --b IF --control SOCKET [link options]
      forward between interfaces IF and IF (both directions) with the options
      below; change them at run time through the Unix socket SOCKET
      (one JSON object per line, see docs/dataplane.md)
  braid-dp blast --interface IF --dst-mac MAC [--size BYTES] [--pps N] [--seconds S]
      send paced raw Ethernet frames (a traffic generator for the benchmark)
  braid-dp edge --host IF --net IF --control SOCKET [--config FILE.json]
      the multipath edge: frames from the host (IF) of a configured reservation
      go to the network (IF) over its paths by weighted round robin, tagged
      with the path's VLAN; tagged frames from the network lose the tag and
      their TCP flows are put back in order (see docs/dataplane.md)
  braid-dp bench-reseq [--packets N] [--flows F] [--rounds R]
      the resequencer's packets per second on one core, against a pass-through
  braid-dp probe echo --port PORT [--seconds S]
  braid-dp probe send --to IP:PORT [--count N] [--interval-ms MS]
      UDP round trips timed by the kernel; send prints a JSON list of
      round trips in ms (null: lost)
  braid-dp --help | --version

link options (both directions start the same):
  --delay-ms MS          one-way delay (default 0)
  --jitter-ms MS         uniform jitter of +-MS, without reordering (default 0)
  --loss-percent P       independent random loss (default 0)
  --gilbert P,R[,BAD[,GOOD]]
                         bursty loss: Gilbert-Elliott, percent: good->bad P,
                         bad->good R, loss in bad BAD (100), in good GOOD (0)
  --rate RATE            serialisation rate, e.g. 100M, 2.5G (default: none)
  --queue-limit N        most packets held per direction (default 100000)
  --seed N               random seed of loss and jitter (default 1)
  --vlan ID              carry only the frames of 802.1Q VLAN ID (one link per
                         VLAN: paths of different delay over one wire)
  --realtime on|off      send from real-time threads (SCHED_FIFO; root): frames
                         leave on time on a busy host (default off)
";

#[derive(Debug, Clone, PartialEq)]
pub struct LinkOptions {
    pub a: String,
    pub b: String,
    pub control: PathBuf,
    pub config: DirectionConfig,
    pub seed: u64,
    pub vlan: Option<u16>,
    pub realtime: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeOptions {
    pub host: String,
    pub net: String,
    pub control: PathBuf,
    pub config: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Link(LinkOptions),
    Blast(BlastOptions),
    Edge(EdgeOptions),
    BenchReseq(BenchOptions),
    Probe(ProbeOptions),
    Help,
    Version,
}

fn not_a(option: &str, value: &str, expected: impl Into<String>) -> CliError {
    CliError::NotA {
        option: option.to_string(),
        value: value.to_string(),
        expected: expected.into(),
    }
}

fn missing(option: &'static str, what: &'static str) -> CliError {
    CliError::Missing {
        option,
        what: Some(what),
    }
}

fn unknown(option: &str, command: &'static str) -> CliError {
    CliError::UnknownOption {
        option: option.to_string(),
        command,
    }
}

/// `--name value` and `--name=value` pairs, in order.
fn option_pairs(args: &[String]) -> Result<Vec<(String, String)>, CliError> {
    let mut pairs = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let name = arg
            .strip_prefix("--")
            .ok_or_else(|| CliError::NotAnOption(arg.clone()))?;
        match name.split_once('=') {
            Some((key, value)) => pairs.push((key.to_string(), value.to_string())),
            None => {
                let value = rest
                    .next()
                    .ok_or_else(|| CliError::MissingValue(name.to_string()))?;
                pairs.push((name.to_string(), value.clone()));
            }
        }
    }
    Ok(pairs)
}

pub fn parse_args(args: &[String]) -> Result<Command, CliError> {
    match args.first().map(|s| s.as_str()) {
        None | Some("--help") | Some("-h") | Some("help") => Ok(Command::Help),
        Some("--version") | Some("-V") => Ok(Command::Version),
        Some("link") => parse_link(&option_pairs(&args[1..])?).map(Command::Link),
        Some("blast") => parse_blast(&option_pairs(&args[1..])?).map(Command::Blast),
        Some("edge") => parse_edge(&option_pairs(&args[1..])?).map(Command::Edge),
        Some("bench-reseq") => parse_bench(&option_pairs(&args[1..])?).map(Command::BenchReseq),
        Some("probe") => parse_probe(&args[1..]).map(Command::Probe),
        Some(other) => Err(CliError::UnknownCommand(other.to_string())),
    }
}

fn number(name: &str, value: &str) -> Result<Value, CliError> {
    let x: f64 = value.parse().map_err(|_| not_a(name, value, "a number"))?;
    serde_json::Number::from_f64(x)
        .map(Value::Number)
        .ok_or_else(|| not_a(name, value, "a finite number"))
}

fn gilbert(value: &str) -> Result<Value, CliError> {
    let parts: Vec<&str> = value.split(',').collect();
    if !(2..=4).contains(&parts.len()) {
        return Err(not_a("gilbert", value, "P,R[,BAD[,GOOD]]"));
    }
    let names = [
        "p_percent",
        "r_percent",
        "bad_loss_percent",
        "good_loss_percent",
    ];
    let mut object = Map::new();
    for (name, part) in names.iter().zip(parts) {
        object.insert(name.to_string(), number("gilbert", part)?);
    }
    Ok(Value::Object(object))
}

fn parse_link(pairs: &[(String, String)]) -> Result<LinkOptions, CliError> {
    let (mut a, mut b, mut control, mut seed, mut vlan) = (None, None, None, 1u64, None);
    let mut realtime = false;
    let mut fields = Map::new();
    for (name, value) in pairs {
        match name.as_str() {
            "a" => a = Some(value.clone()),
            "b" => b = Some(value.clone()),
            "control" => control = Some(PathBuf::from(value)),
            "seed" => {
                seed = value
                    .parse()
                    .map_err(|_| not_a("seed", value, "a whole number"))?
            }
            "vlan" => vlan = Some(whole_number(name, value, 1, 4094)? as u16),
            "realtime" => {
                realtime = match value.as_str() {
                    "on" => true,
                    "off" => false,
                    _ => return Err(not_a("realtime", value, "on or off")),
                }
            }
            "delay-ms" => drop(fields.insert("delay_ms".into(), number(name, value)?)),
            "jitter-ms" => drop(fields.insert("jitter_ms".into(), number(name, value)?)),
            "loss-percent" => drop(fields.insert("loss_percent".into(), number(name, value)?)),
            "gilbert" => drop(fields.insert("gilbert".into(), gilbert(value)?)),
            "rate" => drop(fields.insert("rate".into(), json!(value))),
            "queue-limit" => {
                let limit: u64 = value
                    .parse()
                    .map_err(|_| not_a("queue-limit", value, "a whole number"))?;
                fields.insert("queue_limit".into(), json!(limit));
            }
            other => return Err(unknown(other, "link")),
        }
    }
    let patch = ConfigPatch::from_json(&fields).map_err(CliError::Setting)?;
    let mut config = DirectionConfig::default();
    patch.apply_to(&mut config);
    Ok(LinkOptions {
        a: a.ok_or_else(|| missing("a", "the first interface"))?,
        b: b.ok_or_else(|| missing("b", "the second interface"))?,
        control: control.ok_or_else(|| missing("control", "the control socket's path"))?,
        config,
        seed,
        vlan,
        realtime,
    })
}

fn parse_blast(pairs: &[(String, String)]) -> Result<BlastOptions, CliError> {
    let (mut interface, mut destination) = (None, None);
    let (mut frame_len, mut pps, mut seconds) = (64usize, 0u64, 5.0f64);
    for (name, value) in pairs {
        let whole = || {
            value
                .parse::<u64>()
                .map_err(|_| not_a(name, value, "a whole number"))
        };
        match name.as_str() {
            "interface" => interface = Some(value.clone()),
            "dst-mac" => destination = Some(parse_mac(value).map_err(CliError::Mac)?),
            "size" => frame_len = whole()? as usize,
            "pps" => pps = whole()?,
            "seconds" => {
                seconds = value
                    .parse()
                    .map_err(|_| not_a("seconds", value, "a number"))?
            }
            other => return Err(unknown(other, "blast")),
        }
    }
    if !(22..=9216).contains(&frame_len) {
        return Err(CliError::Outside {
            option: "size",
            value: frame_len.to_string(),
            range: "22 to 9216 bytes",
        });
    }
    if !(seconds > 0.0 && seconds <= 3600.0) {
        return Err(CliError::Outside {
            option: "seconds",
            value: seconds.to_string(),
            range: "(0, 3600]",
        });
    }
    Ok(BlastOptions {
        interface: interface.ok_or(CliError::Missing {
            option: "interface",
            what: None,
        })?,
        destination: destination.ok_or(CliError::Missing {
            option: "dst-mac",
            what: None,
        })?,
        frame_len,
        pps,
        seconds,
    })
}

fn parse_edge(pairs: &[(String, String)]) -> Result<EdgeOptions, CliError> {
    let (mut host, mut net, mut control, mut config) = (None, None, None, None);
    for (name, value) in pairs {
        match name.as_str() {
            "host" => host = Some(value.clone()),
            "net" => net = Some(value.clone()),
            "control" => control = Some(PathBuf::from(value)),
            "config" => config = Some(PathBuf::from(value)),
            other => return Err(unknown(other, "edge")),
        }
    }
    Ok(EdgeOptions {
        host: host.ok_or_else(|| missing("host", "the host's interface"))?,
        net: net.ok_or_else(|| missing("net", "the network's interface"))?,
        control: control.ok_or_else(|| missing("control", "the control socket's path"))?,
        config,
    })
}

fn whole_number(name: &str, value: &str, low: u64, high: u64) -> Result<u64, CliError> {
    match value.parse::<u64>() {
        Ok(n) if (low..=high).contains(&n) => Ok(n),
        _ => Err(not_a(
            name,
            value,
            format!("a whole number from {low} to {high}"),
        )),
    }
}

fn parse_bench(pairs: &[(String, String)]) -> Result<BenchOptions, CliError> {
    let mut options = BenchOptions {
        packets: 4_000_000,
        flows: 16,
        rounds: 3,
    };
    for (name, value) in pairs {
        match name.as_str() {
            "packets" => options.packets = whole_number(name, value, 1, 1 << 30)? as usize,
            "flows" => options.flows = whole_number(name, value, 1, 65_536)? as usize,
            "rounds" => options.rounds = whole_number(name, value, 1, 100)? as usize,
            other => return Err(unknown(other, "bench-reseq")),
        }
    }
    Ok(options)
}

fn parse_probe(args: &[String]) -> Result<ProbeOptions, CliError> {
    let mode = args.first().map(String::as_str);
    let pairs = option_pairs(args.get(1..).unwrap_or(&[]))?;
    match mode {
        Some("echo") => {
            let (mut port, mut seconds) = (None, 60.0);
            for (name, value) in &pairs {
                match name.as_str() {
                    "port" => port = Some(whole_number(name, value, 1, 65_535)? as u16),
                    "seconds" => {
                        seconds = value
                            .parse::<f64>()
                            .ok()
                            .filter(|s| *s > 0.0 && *s <= 86_400.0)
                            .ok_or_else(|| not_a("seconds", value, "in (0, 86400]"))?
                    }
                    other => return Err(unknown(other, "probe echo")),
                }
            }
            let port = port.ok_or(CliError::Missing {
                option: "port",
                what: None,
            })?;
            Ok(ProbeOptions::Echo { port, seconds })
        }
        Some("send") => {
            let (mut to, mut count, mut interval_ms) = (None, 100usize, 10.0f64);
            for (name, value) in &pairs {
                match name.as_str() {
                    "to" => {
                        to = Some(
                            value
                                .parse()
                                .map_err(|_| not_a("to", value, "an IP:PORT address"))?,
                        )
                    }
                    "count" => count = whole_number(name, value, 1, 10_000_000)? as usize,
                    "interval-ms" => {
                        interval_ms = value
                            .parse::<f64>()
                            .ok()
                            .filter(|ms| *ms > 0.0 && *ms <= 60_000.0)
                            .ok_or_else(|| not_a("interval-ms", value, "in (0, 60000]"))?
                    }
                    other => return Err(unknown(other, "probe send")),
                }
            }
            Ok(ProbeOptions::Send {
                to: to.ok_or(CliError::Missing {
                    option: "to",
                    what: None,
                })?,
                count,
                interval: std::time::Duration::from_secs_f64(interval_ms / 1e3),
            })
        }
        _ => Err(CliError::ProbeMode),
    }
}

#[cfg(test)]
mod tests;

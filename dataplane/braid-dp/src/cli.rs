//! Command-line arguments: `braid-dp link ...` and `braid-dp blast ...`.

use std::path::PathBuf;

use serde_json::{json, Map, Value};

use crate::common::field::FieldError;
use crate::link::config::{ConfigPatch, DirectionConfig};
use crate::tools::bench_reseq::BenchOptions;
use crate::tools::blast::{parse_mac, BlastOptions, MacError};
use crate::tools::probe::ProbeOptions;

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

/// Why a command line was refused; each names the option at fault.
#[derive(Debug, Clone, PartialEq)]
pub enum CliError {
    /// `ARG: expected an option like --name value`
    NotAnOption(String),
    /// `--NAME: missing its value`
    MissingValue(String),
    /// `WORD: unknown command (link, edge, ...)`
    UnknownCommand(String),
    /// `--NAME: unknown option of COMMAND`
    UnknownOption {
        option: String,
        command: &'static str,
    },
    /// `--NAME: missing` or `--NAME: missing (WHAT)`
    Missing {
        option: &'static str,
        what: Option<&'static str>,
    },
    /// `--NAME: "VALUE" is not EXPECTED`
    NotA {
        option: String,
        value: String,
        expected: String,
    },
    /// `--NAME: VALUE is outside RANGE`
    Outside {
        option: &'static str,
        value: String,
        range: &'static str,
    },
    /// `option FIELD: WHY`: a link setting the control socket would refuse too.
    Setting(FieldError),
    /// `--dst-mac: ...`
    Mac(MacError),
    /// `probe: expected echo or send`
    ProbeMode,
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::NotAnOption(arg) => write!(f, "{arg}: expected an option like --name value"),
            CliError::MissingValue(name) => write!(f, "--{name}: missing its value"),
            CliError::UnknownCommand(word) => write!(
                f,
                "{word}: unknown command (link, edge, blast, bench-reseq, probe)"
            ),
            CliError::UnknownOption { option, command } => {
                write!(f, "--{option}: unknown option of {command}")
            }
            CliError::Missing { option, what: None } => write!(f, "--{option}: missing"),
            CliError::Missing {
                option,
                what: Some(what),
            } => write!(f, "--{option}: missing ({what})"),
            CliError::NotA {
                option,
                value,
                expected,
            } => write!(f, "--{option}: {value:?} is not {expected}"),
            CliError::Outside {
                option,
                value,
                range,
            } => write!(f, "--{option}: {value} is outside {range}"),
            CliError::Setting(error) => write!(f, "option {error}"),
            CliError::Mac(error) => write!(f, "--dst-mac: {error}"),
            CliError::ProbeMode => write!(f, "probe: expected echo or send"),
        }
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CliError::Setting(error) => Some(error),
            CliError::Mac(error) => Some(error),
            _ => None,
        }
    }
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
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn link_with_every_option() {
        let command = parse_args(&args(
            "link --a v0 --b=v1 --control /tmp/s --delay-ms 20 --jitter-ms 1 --loss-percent 0.5 \
             --gilbert 1,25 --rate 100M --queue-limit 50 --seed 9 --vlan 101 --realtime on",
        ))
        .unwrap();
        let options = match command {
            Command::Link(options) => options,
            other => panic!("not link: {other:?}"),
        };
        assert_eq!((options.a.as_str(), options.b.as_str()), ("v0", "v1"));
        assert_eq!(options.control, PathBuf::from("/tmp/s"));
        assert_eq!(options.config.delay_ns, 20_000_000);
        assert_eq!(options.config.jitter_ns, 1_000_000);
        assert!((options.config.loss - 0.005).abs() < 1e-12);
        assert!(options.config.bursty_loss.is_some());
        assert_eq!(options.config.rate_bps, Some(100_000_000));
        assert_eq!(options.config.queue_limit, 50);
        assert_eq!(options.seed, 9);
        assert_eq!(options.vlan, Some(101));
        assert!(options.realtime);
    }

    #[test]
    fn bad_link_options_name_themselves() {
        let cases = [
            ("link --b v1 --control s", "--a"),
            ("link --a v0 --b v1 --control s --delay-ms x", "--delay-ms"),
            (
                "link --a v0 --b v1 --control s --delay-ms -3",
                "option delay_ms",
            ),
            ("link --a v0 --b v1 --control s --colour red", "--colour"),
            ("link --a v0 --b v1 --control s --vlan 4095", "--vlan"),
            (
                "link --a v0 --b v1 --control s --realtime yes",
                "--realtime",
            ),
            ("link --a v0 --b v1 --control s --gilbert 1", "--gilbert"),
            ("link --a v0 --b v1 --control", "--control"),
            ("link stray", "stray"),
            ("route", "route"),
        ];
        for (line, start) in cases {
            let error = parse_args(&args(line)).unwrap_err().to_string();
            assert!(error.starts_with(start), "{line}: {error}");
        }
    }

    #[test]
    fn blast_defaults_and_checks() {
        let command = parse_args(&args(
            "blast --interface v0 --dst-mac 02:00:00:00:00:02 --pps 1000",
        ))
        .unwrap();
        let options = match command {
            Command::Blast(options) => options,
            other => panic!("not blast: {other:?}"),
        };
        assert_eq!((options.frame_len, options.pps), (64, 1000));
        assert!(parse_args(&args(
            "blast --interface v0 --dst-mac 02:00:00:00:00:02 --size 8"
        ))
        .is_err());
        assert!(parse_args(&args("blast --interface v0")).is_err());
    }

    #[test]
    fn edge_bench_and_probe() {
        let command = parse_args(&args(
            "edge --host h0 --net n0 --control /tmp/s --config c.json",
        ));
        match command.unwrap() {
            Command::Edge(o) => {
                assert_eq!((o.host.as_str(), o.net.as_str()), ("h0", "n0"));
                assert_eq!(o.config, Some(PathBuf::from("c.json")));
            }
            other => panic!("not edge: {other:?}"),
        }
        assert!(parse_args(&args("edge --host h0 --control s"))
            .unwrap_err()
            .to_string()
            .starts_with("--net"));
        match parse_args(&args("bench-reseq --packets 1000")).unwrap() {
            Command::BenchReseq(o) => assert_eq!((o.packets, o.flows), (1000, 16)),
            other => panic!("not bench: {other:?}"),
        }
        assert!(parse_args(&args("bench-reseq --flows 0"))
            .unwrap_err()
            .to_string()
            .starts_with("--flows"));
        match parse_args(&args(
            "probe send --to 10.0.0.2:9 --count 5 --interval-ms 2",
        ))
        .unwrap()
        {
            Command::Probe(ProbeOptions::Send {
                count, interval, ..
            }) => {
                assert_eq!((count, interval.as_millis()), (5, 2))
            }
            other => panic!("not probe send: {other:?}"),
        }
        assert!(matches!(
            parse_args(&args("probe echo --port 9")),
            Ok(Command::Probe(ProbeOptions::Echo { port: 9, .. }))
        ));
        assert!(parse_args(&args("probe send --to nowhere"))
            .unwrap_err()
            .to_string()
            .starts_with("--to"));
        assert!(parse_args(&args("probe bounce"))
            .unwrap_err()
            .to_string()
            .starts_with("probe"));
    }

    #[test]
    fn help_and_version() {
        assert_eq!(parse_args(&[]), Ok(Command::Help));
        assert_eq!(parse_args(&args("--version")), Ok(Command::Version));
    }
}

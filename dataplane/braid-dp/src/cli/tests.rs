//! Command lines read, and refused with the option named.

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

#[test]
fn errors_are_typed_and_read_as_the_usage_names_them() {
    assert_eq!(
        parse_args(&args("edge --host h0 --control s")),
        Err(CliError::Missing {
            option: "net",
            what: Some("the network's interface"),
        })
    );
    match parse_args(&args("link --a v0 --b v1 --control s --loss-percent 101")) {
        Err(CliError::Setting(error)) => assert_eq!(error.field, "loss_percent"),
        other => panic!("not a refused setting: {other:?}"),
    }
    let error = parse_args(&args("blast --interface v0 --dst-mac 02:00")).unwrap_err();
    assert!(std::error::Error::source(&error).is_some());
    assert_eq!(
        error.to_string(),
        "--dst-mac: \"02:00\" is not a MAC address like 02:00:00:00:00:01"
    );
}

"""`braid monitor`: a site's fail-over monitor (seed 003's host script, as a service)."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Annotated

import typer

from braid.cli.common import err_console, fail, fail_in_use, warn_insecure
from braid.core.errors import InputError

_OPTIONS = {
    "rtt_threshold_ms": "--rtt-threshold",
    "rtt_samples": "--rtt-samples",
    "loss_percent": "--loss-percent",
    "loss_window": "--loss-window",
    "throughput_floor_bps": "--throughput-floor",
    "throughput_samples": "--throughput-samples",
    "recover_samples": "--recover-samples",
    "hold_down_s": "--hold-down",
    "lost_after_s": "--lost-after",
    "retry_s": "--retry",
    "paths": "--paths",
}


def monitor(
    target: Annotated[str, typer.Option("--target", help="Far site's host that answers probes.")],
    port: Annotated[int, typer.Option(help="UDP port of the far site's echo.")] = 7007,
    rate: Annotated[float, typer.Option(help="Probes per second.", min=0.1, max=1000)] = 10.0,
    timeout: Annotated[float, typer.Option(help="Seconds before a probe counts as lost.")] = 1.0,
    rtt_threshold: Annotated[float, typer.Option(help="Degraded above this RTT (ms).")] = 50.0,
    rtt_samples: Annotated[int, typer.Option(help="… for this many probes in a row.")] = 3,
    loss_percent: Annotated[float | None, typer.Option(help="Degraded at this loss (%).")] = None,
    loss_window: Annotated[int, typer.Option(help="… over the last N probes.")] = 20,
    throughput_iface: Annotated[
        str | None, typer.Option(help="Read throughput from this interface's counters.")
    ] = None,
    throughput_direction: Annotated[str, typer.Option(help="rx or tx.")] = "rx",
    throughput_floor: Annotated[
        str | None, typer.Option(help="Degraded below this rate (e.g. 100M).")
    ] = None,
    throughput_samples: Annotated[int, typer.Option(help="… for N readings in a row.")] = 3,
    recover_samples: Annotated[int, typer.Option(help="Good probes in a row: recovered.")] = 5,
    hold_down: Annotated[float, typer.Option(help="Seconds after a switch to ignore.")] = 0.5,
    lost_after: Annotated[float, typer.Option(help="Seconds of silence: target lost.")] = 3.0,
    retry: Annotated[float, typer.Option(help="Still degraded this long after: act again.")] = (
        2.0
    ),
    paths: Annotated[str, typer.Option(help="Path names, the first in use at start.")] = (
        "primary,standby"
    ),
    alternate: Annotated[
        bool, typer.Option(help="Each fail-over to the next path (else always the second).")
    ] = False,
    action: Annotated[str, typer.Option(help="none, direct, controller or service.")] = "none",
    rules: Annotated[
        Path | None, typer.Option(help="Rule sets of the site's switch per path (JSON).")
    ] = None,
    bridge: Annotated[
        str | None, typer.Option(help="direct: the OVS bridge (default: the rules' switch name).")
    ] = None,
    controller: Annotated[
        str | None, typer.Option(help="controller: braid controller's HOST:PORT.")
    ] = None,
    controller_token_file: Annotated[
        Path | None,
        typer.Option(help="controller: file holding the controller API's token."),
    ] = None,
    extra_flows: Annotated[int, typer.Option(help="Extra entries per fail-over.", min=0)] = 0,
    service: Annotated[
        str | None, typer.Option(help="service: braid serve's URL (posts --link's state).")
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            help="service: a monitor token (braid token create --role monitor).",
            envvar="BRAID_TOKEN",
        ),
    ] = None,
    link: Annotated[
        str | None, typer.Option(help="service: the watched link's id in braid serve's topology.")
    ] = None,
    log: Annotated[Path | None, typer.Option(help="Event log (JSON lines), appended.")] = None,
    log_probes: Annotated[bool, typer.Option(help="Log every probe, not only events.")] = True,
    metrics_port: Annotated[int | None, typer.Option(help="Serve Prometheus metrics.")] = None,
    metrics_token_file: Annotated[
        Path | None,
        typer.Option(help="File holding the bearer token /metrics wants (--metrics-port)."),
    ] = None,
    metrics_open: Annotated[
        bool, typer.Option(help="Serve /metrics to anyone, without a token (warned).")
    ] = False,
    echo_port: Annotated[int | None, typer.Option(help="Also answer the far site's probes.")] = (
        None
    ),
    netns: Annotated[str | None, typer.Option(help="Probe from this network namespace.")] = None,
    duration: Annotated[float | None, typer.Option(help="Stop after this many seconds.")] = None,
) -> None:
    """Probe the far site, detect degradation and recovery, fail the site's switch over."""
    from braid.adapters.failover.metrics import MonitorMetrics
    from braid.adapters.failover.probe import UdpEcho
    from braid.adapters.failover.runner import MonitorConfig, run_monitor
    from braid.adapters.listening import AddressInUseError
    from braid.bootstrap.monitor import ServiceTarget, site_action
    from braid.core.failover import DetectionRule
    from braid.core.model.units import parse_bandwidth

    if throughput_direction not in ("rx", "tx"):
        fail(f"--throughput-direction: {throughput_direction!r} must be rx or tx")
    try:
        floor = (
            None if throughput_floor is None
            else float(parse_bandwidth(throughput_floor, "--throughput-floor"))
        )  # fmt: skip
        rule = DetectionRule(
            rtt_threshold_ms=rtt_threshold, rtt_samples=rtt_samples, loss_percent=loss_percent,
            loss_window=loss_window, throughput_floor_bps=floor,
            throughput_samples=throughput_samples, recover_samples=recover_samples,
            hold_down_s=hold_down, lost_after_s=lost_after, retry_s=retry,
            paths=tuple(p.strip() for p in paths.split(",")), alternate=alternate,
        )  # fmt: skip
        rule.check()
    except InputError as exc:
        fail(f"{_OPTIONS.get(exc.field, exc.field)}: {exc.message}")
    try:
        run_action = site_action(
            action, rules, rule.paths, bridge=bridge, controller=controller, extra=extra_flows,
            service=ServiceTarget(service, token, link),
            controller_token=_token_in(controller_token_file, "--controller-token-file"),
        )  # fmt: skip
    except InputError as exc:
        fail(str(exc))
    if floor is not None and throughput_iface is None:
        fail("--throughput-floor: needs --throughput-iface to read the rate from")
    config = MonitorConfig(
        target=target, port=port, rule=rule, rate_hz=rate, timeout=timeout, netns=netns,
        interface=throughput_iface, direction=throughput_direction, log=log,
        log_probes=log_probes, duration=duration,
    )  # fmt: skip
    metrics = MonitorMetrics()
    echo = None
    option = "--metrics-port"
    try:
        if metrics_port is not None:
            metrics.serve(metrics_port, token=_metrics_token(metrics_token_file, metrics_open))
        option = "--echo-port"
        if echo_port is not None:
            echo = UdpEcho(echo_port, netns)
    except AddressInUseError as exc:
        if run_action is not None:
            run_action.close()
        fail_in_use(exc, option)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        summary = run_monitor(config, run_action, stop, lambda m: err_console.print(m), metrics)
    except KeyboardInterrupt:
        stop.set()
        return
    finally:
        if echo is not None:
            echo.close()
        if run_action is not None:
            run_action.close()
    typer.echo(
        f"probes {summary.probes} (lost {summary.lost}), detections {summary.detections}, "
        f"actions {len(summary.actions)}, recovered {summary.recovered}, "
        f"target lost {summary.target_lost}"
    )


def _token_in(path: Path | None, option: str) -> str | None:
    from braid.adapters.southbound.api_token import TokenFileError, read_token_file

    if path is None:
        return None
    try:
        return read_token_file(path)
    except TokenFileError as exc:
        fail(f"{option}: {exc}")


def _metrics_token(path: Path | None, open_: bool) -> str | None:
    """The token /metrics wants: required, unless `--metrics-open` (warned at every start)."""
    if path is None and not open_:
        fail(
            "--metrics-port: /metrics needs a token: pass --metrics-token-file FILE",
            "or --metrics-open to serve the metrics to anyone who can connect",
        )
    if path is None:
        warn_insecure("the monitor's /metrics (--metrics-open)")
    return _token_in(path, "--metrics-token-file")

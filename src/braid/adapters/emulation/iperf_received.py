"""iperf3 runs measured where the traffic lands: the server's per-second report.

A UDP sender's own report says what it sent, which for a policed
over-sender is twice what arrives; a TCP sender's says what it wrote into
its socket. What a reservation delivered is what its receiver got, so the
server runs with `-J` and the client asks for its report
(`--get-server-output`): `server_output_json.intervals` are the receiver's
seconds (the warm-up ones, `-O`, marked omitted and left out here).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from braid.adapters.emulation.iperf import MARK, IperfError, IperfServer, Shell, client_output

__all__ = [
    "MIN_INTERVAL",
    "JsonServer",
    "ReceivedFlow",
    "ReceivedRates",
    "parse_received",
    "received_argv",
    "run_received",
]

MIN_INTERVAL: Final = 0.5  # seconds; shorter reports are left out
_SLACK_SECONDS: Final = 15.0  # beyond the run's own length before a client is given up


@dataclass(frozen=True, slots=True)
class ReceivedFlow:
    """One iperf3 flow: UDP at `rate_bps` (a constant sender) or greedy TCP when None."""

    seconds: float
    server_port: int
    udp: bool = False
    rate_bps: int | None = None
    omit: int = 1
    block_bytes: int | None = None

    def __post_init__(self) -> None:
        if self.udp and self.rate_bps is None:
            raise IperfError("a UDP flow needs rate_bps (iperf3 sends UDP at 1 Mbit/s otherwise)")


@dataclass(frozen=True, slots=True)
class ReceivedRates:
    """The receiver's view of one run: bit/s per second, and what the sender wrote."""

    interval_ends: tuple[float, ...]
    interval_bps: tuple[float, ...]
    sent_bps: float

    @property
    def mean_bps(self) -> float:
        return sum(self.interval_bps) / len(self.interval_bps) if self.interval_bps else 0.0


def received_argv(server_ip: str, flow: ReceivedFlow) -> list[str]:
    argv = ["iperf3", "-J", "--get-server-output", "-c", server_ip, "-p", str(flow.server_port)]
    argv += ["-t", f"{flow.seconds:g}", "-O", str(flow.omit), "-i", "1"]
    if flow.udp:
        argv += ["-u", "-b", str(flow.rate_bps)]
    else:
        argv += ["-C", "cubic"]  # Linux's default, named so a changed host default shows
    if flow.block_bytes is not None:
        argv += ["-l", str(flow.block_bytes)]
    return argv


def parse_received(text: str) -> ReceivedRates:
    """The server's intervals from a client `-J --get-server-output` report."""
    try:
        report = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IperfError(f"iperf3 did not print JSON ({exc.msg})") from exc
    if not isinstance(report, Mapping):
        raise IperfError("iperf3 JSON report is not an object")
    if report.get("error"):
        raise IperfError(f"iperf3: {report['error']}")
    server = report.get("server_output_json")
    if not isinstance(server, Mapping) or "intervals" not in server:
        raise IperfError("iperf3 report has no server_output_json (server not run with -J?)")
    # The last report is often a sliver of a second (the run's tail): its rate is noise.
    kept = [
        i["sum"]
        for i in server["intervals"]
        if not i["sum"].get("omitted") and float(i["sum"].get("seconds", 1.0)) >= MIN_INTERVAL
    ]
    sent = _sent_bps(report.get("end") or {})
    return ReceivedRates(
        interval_ends=tuple(float(i["end"]) for i in kept),
        interval_bps=tuple(float(i["bits_per_second"]) for i in kept),
        sent_bps=sent,
    )


def _sent_bps(end: Mapping[str, Any]) -> float:
    sent = end.get("sum_sent") or end.get("sum") or {}
    return float(sent.get("bits_per_second", 0.0))


class JsonServer(IperfServer):
    """An iperf3 server writing JSON (which `--get-server-output` hands the client)."""

    def __init__(self, host: Shell, port: int) -> None:
        super().__init__(host, port, json=True)


def run_received(host: Shell, server_ip: str, flow: ReceivedFlow) -> ReceivedRates:
    """One client run against a `JsonServer`; the receiver's seconds come back."""
    proc = host.popen(
        ["env", MARK, *received_argv(server_ip, flow)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return parse_received(client_output(proc, flow.seconds + flow.omit + _SLACK_SECONDS))

"""iperf3 runs inside emulated hosts, and their JSON reports read into numbers.

Goodput is the receiver's view: `end.sum_received`, which excludes the
omitted warm-up seconds (`-O`). Per-interval rates come from the sender's
interval sums, the only time series iperf3's client report carries.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

DEFAULT_PORT = 5201
# Every process braid starts in an emulated host carries this in its environment, so that
# `sweep` can find it after a crash (its namespace outlives the host shell).
MARK: Final = "BRAID_EMULATION=1"


class IperfError(RuntimeError):
    pass


class Shell(Protocol):
    """What an emulated host offers: Mininet's `Host` fits."""

    name: str

    def popen(self, *args: Any, **kwargs: Any) -> subprocess.Popen[Any]: ...

    def IP(self) -> str: ...  # noqa: N802 - Mininet's name


@dataclass(frozen=True, slots=True)
class IperfResult:
    """One iperf3 client run, in bit/s and seconds."""

    received_bps: float
    sent_bps: float
    seconds: float
    streams: int
    retransmits: int
    stream_received_bps: tuple[float, ...]
    interval_ends: tuple[float, ...]
    interval_bps: tuple[float, ...]
    # Per interval, each stream's rate (the sender's view, as `interval_bps`).
    interval_stream_bps: tuple[tuple[float, ...], ...] = ()

    @property
    def received_mbps(self) -> float:
        return self.received_bps / 1e6


def parse_report(text: str) -> IperfResult:
    """Read an iperf3 `-J` client report; IperfError says what iperf3 complained of."""
    try:
        report = json.loads(text)
    except json.JSONDecodeError as exc:
        snippet = text.strip().splitlines()[-1:] or ["(empty)"]
        raise IperfError(f"iperf3 did not print JSON ({exc.msg}): {snippet[0][:200]}") from exc
    if not isinstance(report, Mapping):
        raise IperfError("iperf3 JSON report is not an object")
    if report.get("error"):
        raise IperfError(f"iperf3: {report['error']}")
    end = report.get("end")
    if not isinstance(end, Mapping) or "sum_received" not in end:
        raise IperfError("iperf3 report has no end.sum_received (a UDP run, or cut short?)")
    received, sent = end["sum_received"], end.get("sum_sent", {})
    streams = end.get("streams") or []
    kept = [i for i in report.get("intervals", []) if not i["sum"].get("omitted")]
    intervals = [i["sum"] for i in kept]
    return IperfResult(
        received_bps=float(received["bits_per_second"]),
        sent_bps=float(sent.get("bits_per_second", 0.0)),
        seconds=float(received.get("seconds", 0.0)),
        streams=len(streams),
        retransmits=int(sent.get("retransmits", 0)),
        stream_received_bps=tuple(_stream_rate(s) for s in streams),
        interval_ends=tuple(float(i["end"]) for i in intervals),
        interval_bps=tuple(float(i["bits_per_second"]) for i in intervals),
        interval_stream_bps=tuple(
            tuple(float(s["bits_per_second"]) for s in i.get("streams", [])) for i in kept
        ),
    )


def _stream_rate(stream: Mapping[str, Any]) -> float:
    receiver = stream.get("receiver") or {}
    return float(receiver.get("bits_per_second", 0.0))


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """One iperf3 client run; `first_port` fixes the streams' client ports (first, first+1, ...)."""

    seconds: float
    streams: int = 1
    omit: int = 1
    rate_bps: int | None = None  # per stream; None means as fast as TCP goes
    pacing_bps: int | None = None  # per stream, iperf3 --fq-rate: the kernel paces each socket
    block_bytes: int | None = None  # iperf3 -l; small blocks pace slow streams smoothly
    server_port: int = DEFAULT_PORT
    first_port: int | None = None
    connect_timeout_ms: int = 3000
    congestion: str | None = (
        "cubic"  # iperf3 -C; the seeds ran CUBIC (Linux default), None: host default
    )
    # Run iperf3 (client and its server) under this, e.g. ("mptcpize", "run") for MPTCP.
    launcher: tuple[str, ...] = ()


def client_argv(server_ip: str, options: ClientOptions) -> list[str]:
    argv = ["iperf3", "-J", "-c", server_ip, "-p", str(options.server_port)]
    argv += ["-t", f"{options.seconds:g}", "-O", str(options.omit), "-i", "1"]
    argv += ["--connect-timeout", str(options.connect_timeout_ms)]
    if options.congestion:
        argv += ["-C", options.congestion]
    if options.rate_bps is not None:
        argv += ["-b", str(options.rate_bps)]
    if options.pacing_bps is not None:
        argv += ["--fq-rate", str(options.pacing_bps)]
    if options.block_bytes is not None:
        argv += ["-l", str(options.block_bytes)]
    if options.first_port is not None:
        argv += ["--cport", str(options.first_port)]
    return [*argv, "-P", str(options.streams)]


class IperfServer:
    """An iperf3 server on a host; one per port, stopped on `close`."""

    def __init__(
        self,
        host: Shell,
        port: int = DEFAULT_PORT,
        launcher: Sequence[str] = (),
        *,
        json: bool = False,
    ) -> None:
        self.host = host
        self.port = port
        self._proc = host.popen(
            ["env", MARK, *launcher, "iperf3", "-s", *(["-J"] if json else []), "-p", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(0.3)  # let it bind before a client connects

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5)
        close_pipes(self._proc)


def run_client(host: Shell, server_ip: str, options: ClientOptions) -> IperfResult:
    """One client process; the streams share its report."""
    proc = host.popen(
        ["env", MARK, *options.launcher, *client_argv(server_ip, options)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return _finish(proc, options)


def _finish(proc: subprocess.Popen[Any], options: ClientOptions) -> IperfResult:
    limit = options.seconds + options.omit + options.connect_timeout_ms / 1000 + 15
    return parse_report(client_output(proc, limit))


def client_output(proc: subprocess.Popen[Any], limit: float) -> str:
    """What a client process printed (its report), once it ends; killed after `limit` s."""
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise IperfError(f"iperf3 client did not finish within {limit:.0f} s") from None
    finally:
        close_pipes(proc)
    return str(out or err or "")


def close_pipes(proc: subprocess.Popen[Any]) -> None:
    """Close what Mininet's `popen` opened to the process (it pipes stdin by default)."""
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def combine(results: Sequence[IperfResult]) -> IperfResult:
    """Several concurrent client runs read as one (rates add, interval by interval)."""
    if not results:
        raise IperfError("no iperf3 results to combine")
    count = min(len(r.interval_bps) for r in results)
    return IperfResult(
        received_bps=sum(r.received_bps for r in results),
        sent_bps=sum(r.sent_bps for r in results),
        seconds=max(r.seconds for r in results),
        streams=sum(r.streams for r in results),
        retransmits=sum(r.retransmits for r in results),
        stream_received_bps=tuple(b for r in results for b in r.stream_received_bps),
        interval_ends=results[0].interval_ends[:count],
        interval_bps=tuple(sum(r.interval_bps[i] for r in results) for i in range(count)),
        interval_stream_bps=tuple(
            tuple(b for r in results for b in r.interval_stream_bps[i])
            for i in range(min(len(r.interval_stream_bps) for r in results))
        ),
    )

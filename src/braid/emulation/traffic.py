"""Traffic for experiments: concurrent iperf3 clients plus per-path counters sampled over time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Self

from braid.adapters.emulation.iperf import ClientOptions, IperfResult, IperfServer, run_client
from braid.adapters.failover.counters import InterfaceRate
from braid.emulation.session import EmulationSession

SAMPLE_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class Flowset:
    """One iperf3 client run from `client` to `server`, starting `delay` seconds in."""

    label: str
    client: str
    server: str
    options: ClientOptions
    delay: float = 0.0
    before: Callable[[], None] | None = None  # e.g. install a reservation when traffic starts


@dataclass
class Measurement:
    results: dict[str, IperfResult]
    times: list[float] = field(default_factory=list)
    path_mbps: dict[str, list[float]] = field(default_factory=dict)


def measure(
    session: EmulationSession,
    flowsets: Sequence[Flowset],
    counters: Mapping[str, tuple[str, str]] | None = None,
) -> Measurement:
    """Run the flowsets together; sample `counters` (label -> (link id, sending node))."""
    servers = [
        IperfServer(session.net.host(f.server), f.options.server_port, f.options.launcher)
        for f in flowsets
    ]
    results: dict[str, IperfResult] = {}
    errors: list[BaseException] = []
    stop = threading.Event()
    measurement = Measurement(results)
    try:
        threads = [
            threading.Thread(target=_client, args=(session, f, results, errors), daemon=True)
            for f in flowsets
        ]
        sampler = threading.Thread(
            target=_sample, args=(session, counters or {}, measurement, stop), daemon=True
        )
        sampler.start()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        stop.set()
        for server in servers:
            server.close()
    if errors:
        raise errors[0]
    return measurement


def _client(
    session: EmulationSession,
    flowset: Flowset,
    results: dict[str, IperfResult],
    errors: list[BaseException],
) -> None:
    try:
        if flowset.delay:
            time.sleep(flowset.delay)
        if flowset.before is not None:
            flowset.before()
        server_ip = session.net.ip(flowset.server)
        results[flowset.label] = run_client(
            session.net.host(flowset.client), server_ip, flowset.options
        )
    except BaseException as exc:
        errors.append(exc)


def _sample(
    session: EmulationSession,
    counters: Mapping[str, tuple[str, str]],
    measurement: Measurement,
    stop: threading.Event,
) -> None:
    if not counters:
        return
    began = time.monotonic()
    last = {k: session.net.tx_bytes(*v) for k, v in counters.items()}
    for label in counters:
        measurement.path_mbps[label] = []
    while not stop.wait(SAMPLE_SECONDS):
        now = {k: session.net.tx_bytes(*v) for k, v in counters.items()}
        measurement.times.append(round(time.monotonic() - began, 2))
        for label in counters:
            delta = now[label] - last[label]
            measurement.path_mbps[label].append(round(delta * 8 / SAMPLE_SECONDS / 1e6, 3))
        last = now


class BackgroundSampler:
    """Samples something every `step` seconds on a thread while the `with` block runs.

    Subclasses give `_run`, which loops until `_stop` is set; the thread is a
    daemon so a hung sample never keeps an experiment's process alive.
    """

    def __init__(self, step: float) -> None:
        self.step = step
        self.times: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        raise NotImplementedError


class RateSampler(BackgroundSampler):
    """Throughput delivered to `host` (its switch port's transmit counter), every `step`
    seconds: the rate a receiver sees, finer than iperf3's one-second reports."""

    def __init__(self, session: EmulationSession, step: float = 0.1, host: str = "h2") -> None:
        super().__init__(step)
        port = session.net.wiring.hosts[host]
        self.reader = InterfaceRate(f"{session.net.bridges[port.switch]}-eth{port.port}", "tx")
        self.rates: list[float] = []

    def __enter__(self) -> Self:
        self.reader.read()  # the first read only sets the counter's origin
        return super().__enter__()

    def _run(self) -> None:
        next_at = time.monotonic() + self.step
        while not self._stop.wait(max(0.0, next_at - time.monotonic())):
            next_at += self.step
            bps = self.reader.read()
            if bps is not None:
                self.times.append(time.time())
                self.rates.append(bps)

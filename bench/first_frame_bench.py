"""Request to traffic: from the POST of an immediate reservation to its first frame delivered.

A real `braid serve --southbound` process programs a Mininet network of
userspace Open vSwitch bridges (two paths of 100 Mbit/s between s1 and s3,
one host on each end). A 1 kHz UDP probe runs from h1 to h2 all along;
before a reservation nothing of it passes (the bridges forward only what
braid installed). Each trial POSTs a reservation starting now, notes when
the POST was sent, and reads from the probe's trace when the first probe
packet reached h2; then it cancels and waits until braid reports the rules
removed (and no probe packet passes) before the next trial.

The figure is the time from the moment the client sent the POST to the
first frame at the far host: it includes the HTTP round trip, the booking
(the store's write), the provisioning pass (compiling the rules, ovs-ofctl
with its barrier) and the switches' first forwarding. The floor (issue 31)
is 1 s median; SENSE reports 183 s mean provisioning, OSCARS "a few
minutes". The same run also reports, as a baseline, the time braid takes
from the POST until its reply (the booking alone, no switch touched), so
the ratio shows what the switches add.

Needs root, Open vSwitch and Mininet. Run from the repository root:

    .venv/bin/python bench/first_frame_bench.py               # 20 trials
    .venv/bin/python bench/first_frame_bench.py --trials 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml
from rich.console import Console
from rich.progress import track
from rich.table import Table

from braid.adapters.emulation.network import EmulatedNetwork, HostSpec
from braid.adapters.emulation.ovs import RUN_DIR, ensure_ovs, stop_ovs
from braid.adapters.emulation.probe import ProbeRun, ProbeTrace
from braid.adapters.free_ports import free_port
from braid.adapters.wiring_files import wiring_of_ports
from braid.core.model.instants import format_instant
from braid.core.model.topology import topology_from_dict
from braid.emulation.experiments.service import service_topology
from first_frame_domains import HOST_AT, DomainsServe, switch_topology

BRAID = str(Path(sys.executable).with_name("braid"))
MBPS = 1_000_000
PROBE_PORT = 7101
PROBE_RATE = 1000  # packets a second: the first frame is known to the millisecond
WAIT_FOR_FRAME = 3.0  # seconds a trial waits for its first frame before it cancels
FLOORS_S = {"one domain": 1.0, "six domains": 2.0}
HOSTS = {"s1": "h1", "s3": "h2"}


@dataclass(frozen=True, slots=True)
class Trial:
    posted_at: float  # when the client sent the POST (epoch seconds)
    replied_at: float  # when the 201 came back
    cancelled_at: float

    def first_frame(self, trace: ProbeTrace) -> float | None:
        """Seconds from the POST to the first probe packet at the far host, if one came."""
        arrived = [at for _, _, at in trace.arrivals if self.posted_at <= at < self.cancelled_at]
        return min(arrived) - self.posted_at if arrived else None


def wiring_file(net: EmulatedNetwork) -> dict[str, Any]:
    """The `--southbound` wiring of the emulated network: its bridges, ports and hosts."""
    drivers = {"direct": {"rundir": str(RUN_DIR)}}
    return wiring_of_ports(net.port_map, drivers=drivers, bridges=net.bridges)


class Serve:
    """A `braid serve --southbound` process on a fresh SQLite store, and a client for it."""

    def __init__(self, workdir: Path, topology: dict[str, Any], wiring: dict[str, Any]) -> None:
        self.port = free_port()
        self.database = f"sqlite:///{workdir / 'braid.db'}"
        (workdir / "topology.yaml").write_text(yaml.safe_dump(topology))
        (workdir / "wiring.yaml").write_text(yaml.safe_dump(wiring))
        self.workdir = workdir
        made = subprocess.run(
            [BRAID, "token", "create", "--user", "bench", "--role", "operator",
             "--database", self.database],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        self.client = httpx.Client(
            base_url=f"http://127.0.0.1:{self.port}",
            headers={"Authorization": f"Bearer {made.stdout.split()[0]}"},
            timeout=10,
        )
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Serve:
        log = (self.workdir / "serve.log").open("wb")
        self.process = subprocess.Popen(
            [BRAID, "serve", "-t", str(self.workdir / "topology.yaml"),
             "--database", self.database, "--port", str(self.port),
             "--southbound", str(self.workdir / "wiring.yaml")],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not self._healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"braid serve did not come up; see {self.workdir}/serve.log")
            time.sleep(0.2)
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)

    def _healthy(self) -> bool:
        try:
            return self.client.get("/healthz").status_code == 200
        except httpx.HTTPError:
            return False

    def reserve_now(self, bandwidth_bps: int, seconds: int) -> tuple[str, float, float]:
        """Book from now for `seconds`; the reservation's id, when sent, when answered."""
        sent = time.time()
        # A start in the second now begun is now to the server too (instants are whole
        # seconds); the one case a second boundary falls between is retried once.
        for start in (math.floor(sent), math.ceil(time.time())):
            body = {
                "src": "s1",
                "dst": "s3",
                "bandwidth": f"{bandwidth_bps}bps",
                "start": format_instant(start),
                "end": format_instant(start + seconds),
            }
            answer = self.client.post("/v1/reservations", json=body)
            if answer.status_code == 201:
                return str(answer.json()["id"]), sent, time.time()
            if "past" not in answer.text:
                break
        raise SystemExit(f"booking refused: {answer.status_code} {answer.text}")

    def cancel_and_wait(self, rid: str, timeout: float = 15.0) -> float:
        cancelled = time.time()
        self.client.delete(f"/v1/reservations/{rid}").raise_for_status()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen = self.client.get(f"/v1/reservations/{rid}").json()
            if (seen.get("provisioning") or {}).get("state") == "removed":
                return cancelled
            time.sleep(0.1)
        raise SystemExit(f"{rid}: rules not removed {timeout:g} s after the cancel")


@contextmanager
def emulated_world(
    topology_data: dict[str, Any], host_at: dict[str, str]
) -> Iterator[EmulatedNetwork]:
    started = ensure_ovs()
    try:
        topology = topology_from_dict(topology_data)
        hosts = [HostSpec(name, node) for node, name in host_at.items()]
        with EmulatedNetwork(topology, hosts) as net:
            yield net
    finally:
        stop_ovs(started)


def one_domain(trials: int, workdir: Path) -> tuple[list[Trial], ProbeTrace]:
    topology = service_topology(100 * MBPS)
    with (
        emulated_world(topology, HOSTS) as net,
        Serve(workdir, topology, wiring_file(net)) as serve,
    ):
        return probed_trials(
            net, trials, workdir, serve.reserve_now, serve.cancel_and_wait, "one domain"
        )


def six_domains(trials: int, workdir: Path) -> tuple[list[Trial], ProbeTrace]:
    with (
        emulated_world(switch_topology(), HOST_AT) as net,
        DomainsServe(net, workdir) as serve,
    ):
        return probed_trials(
            net, trials, workdir, serve.reserve_now, serve.cancel_and_wait, "six domains"
        )


def probed_trials(
    net: EmulatedNetwork,
    trials: int,
    workdir: Path,
    reserve: Callable[[int, int], tuple[str, float, float]],
    cancel: Callable[[str], float],
    label: str,
) -> tuple[list[Trial], ProbeTrace]:
    """Book, wait for traffic, cancel, `trials` times, with the probe running throughout."""
    probe = ProbeRun(
        net.host("h1"), net.host("h2"), net.ip("h2"), port=PROBE_PORT, rate=PROBE_RATE,
        seconds=trials * (WAIT_FOR_FRAME + 3.0) + 4.0, workdir=workdir,
    )  # fmt: skip
    done: list[Trial] = []
    try:
        time.sleep(1.0)  # the probe runs before the first booking: nothing may pass
        for _ in track(range(trials), description=f"{label}: POST → first frame"):
            rid, sent, replied = reserve(60 * MBPS, 600)
            time.sleep(max(0.0, sent + WAIT_FOR_FRAME - time.time()))
            done.append(Trial(sent, replied, cancel(rid)))
            time.sleep(0.5)
    except BaseException:
        probe.stop()
        raise
    return done, probe.finish()


def figures(scope: str, trials: Sequence[Trial], trace: ProbeTrace) -> dict[str, Any]:
    frames = [t.first_frame(trace) for t in trials]
    arrived = [f for f in frames if f is not None]
    replies = [t.replied_at - t.posted_at for t in trials]
    before = trace.arrived_between(0.0, trials[0].posted_at) if trials else 0
    median = statistics.median(arrived) if arrived else None
    reply = statistics.median(replies) if replies else None
    floor = FLOORS_S[scope]
    return {
        "scope": scope,
        "trials": len(trials),
        "frames_seen": len(arrived),
        "first_frame_s": [None if f is None else round(f, 4) for f in frames],
        "median_s": median,
        "p90_s": _quantile(arrived, 0.9),
        "max_s": max(arrived, default=None),
        "reply_median_s": reply,
        "switches_add": None if median is None or not reply else median / reply,
        "probe_before_first_booking": before,
        "floor_s": floor,
        "meets_floor": median is not None and median <= floor and len(arrived) == len(trials),
    }


def _quantile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def show(results: Sequence[dict[str, Any]]) -> None:
    table = Table(title="Immediate reservation: POST → first frame at the far host")
    for column in ("scope", "n", "frames", "median s", "p90 s", "max s", "reply s", "÷ reply",
                   "floor s", "ok"):  # fmt: skip
        table.add_column(column, justify="right", no_wrap=column == "scope")

    def fmt(value: float | None, digits: int = 3) -> str:
        return "—" if value is None else f"{value:.{digits}f}"

    console = Console()
    for r in results:
        table.add_row(
            r["scope"], str(r["trials"]), str(r["frames_seen"]), fmt(r["median_s"]),
            fmt(r["p90_s"]), fmt(r["max_s"]), fmt(r["reply_median_s"]),
            fmt(r["switches_add"], 1), f"{r['floor_s']:g}", "yes" if r["meets_floor"] else "NO",
        )  # fmt: skip
    console.print(table)
    for r in results:
        if r["probe_before_first_booking"]:
            console.print(
                f"[red]{r['scope']}: {r['probe_before_first_booking']} probe packets passed "
                "before any booking: the bridges forward unreserved traffic[/red]"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--only", choices=("one", "six"), help="run one of the two scopes")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if os.geteuid() != 0 or not shutil.which("ovs-vsctl") or not shutil.which("mn"):
        print("needs root, Open vSwitch and Mininet (apt-get install openvswitch-switch mininet)")
        return 2
    runs = {"one domain": one_domain, "six domains": six_domains}
    if args.only:
        runs = {k: v for k, v in runs.items() if k.startswith(args.only)}
    results = []
    for scope, run in runs.items():
        with tempfile.TemporaryDirectory(prefix="braid-first-frame-") as tmp:
            trials, trace = run(args.trials, Path(tmp))
        results.append(figures(scope, trials, trace))
    show(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    clean = all(r["meets_floor"] and not r["probe_before_first_booking"] for r in results)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())

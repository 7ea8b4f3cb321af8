"""Provisioning at scale: 100 reservations starting in the same second on 20 switches.

The reservations are booked through the reservation service (each gets its
VLANs and group ids at booking), all starting at the same instant; then one
provisioning pass runs at that instant against a private Open vSwitch
(userspace datapath, 20 bridges in a ring with chords, one host per
switch). The figure is the time from the start instant until the pass has
every rule of every reservation confirmed by its switch (ovs-ofctl and the
controller both wait for the switch's barrier reply). The issue's floor is
2 s with the direct driver; the controller driver is reported in the same
run. Baseline, same run: installing the same plans one reservation at a
time (each plan's ordered steps, one driver call per rule set), as a
provisioner without whole-table changes would.

Needs root and Open vSwitch. Run from the repository root:

    .venv/bin/python bench/provisioning_bench.py               # 100 reservations, 20 switches
    .venv/bin/python bench/provisioning_bench.py --reservations 20 --repeat 1
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from braid.adapters.southbound.controller import ControllerDriver
from braid.adapters.southbound.direct import OfctlDriver, ofctl_runner
from braid.adapters.southbound.driver import SouthboundDriver
from braid.adapters.southbound.fleet import DriverTables
from braid.adapters.southbound.ovs_sandbox import OvsSandbox, missing_tools
from braid.adapters.wiring_files import SouthboundConfig, wiring_from_dict, wiring_skeleton
from braid.app.provisioning.memory import MemoryProvisioningStore
from braid.app.provisioning.provisioner import Provisioner, Wiring
from braid.app.records import User
from braid.app.reservations.commands import Reserve
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.plan_facts import labels_of
from braid.app.reservations.service import ReservationService
from braid.core.model.instants import format_instant
from braid.core.model.topology import topology_from_dict
from braid.core.provisioning.status import Phase
from braid.core.rules.changes import install_steps
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.model import RuleRequest, StepKind

START_IN = 3600  # the reservations start an hour after booking (the clock is the bench's)
OPERATOR = User("bench", "operator")


def network(switches: int) -> tuple[dict[str, Any], SouthboundConfig]:
    """A ring of `switches` with a chord every fourth switch; a host on every switch."""
    names = [f"s{i + 1}" for i in range(switches)]
    pairs = [(i, (i + 1) % switches) for i in range(switches)]
    pairs += [(i, (i + switches // 2) % switches) for i in range(0, switches // 2, 4)]
    links = [
        {"id": f"{names[a]}-{names[b]}", "a": names[a], "b": names[b], "capacity": "100G"}
        for a, b in pairs
    ]
    topology = {"nodes": [{"id": n} for n in names], "links": links}
    model = topology_from_dict(topology)
    return topology, wiring_from_dict(wiring_skeleton(model), model)


def booked_world(
    count: int, switches: int, seed: int
) -> tuple[ReservationService, int, SouthboundConfig]:
    topology, config = network(switches)
    clock_now = [1_900_000_000]
    service = ReservationService(MemoryRepository(), clock=lambda: clock_now[0])
    service.start(topology)
    rng = random.Random(seed)
    start = clock_now[0] + START_IN
    pairs = [(a, b) for a in topology["nodes"] for b in topology["nodes"] if a["id"] < b["id"]]
    for a, b in rng.sample(pairs, count):
        body = {
            "src": a["id"],
            "dst": b["id"],
            "bandwidth": "1G",
            "max_paths": 2,
            "start": format_instant(start),
            "end": format_instant(start + 600),
        }
        service.reserve(OPERATOR, Reserve.parse(body))
    return service, start, config


def one_pass(
    service: ReservationService, config: SouthboundConfig, driver: SouthboundDriver, start: int
) -> float:
    """Seconds for the pass at the start instant; checks every reservation got installed."""
    ports, host_at = config.ports, config.host_at
    tables = DriverTables(
        dict.fromkeys(ports.switches, driver), {s: p.dpid for s, p in ports.switches.items()}
    )
    store = MemoryProvisioningStore()
    provisioner = Provisioner(
        service.books.store,
        store,
        tables,
        # The sandbox's bridges have no ports to queue on: time the rules alone.
        Wiring(ports, host_at, enforce=False),
        lambda: service.topology,
        holder="bench",
        lead=0,
    )
    began = time.perf_counter()
    report = provisioner.step(start)
    seconds = time.perf_counter() - began
    phases = {s.phase for s in store.statuses().values()}
    if report.errors or phases != {Phase.INSTALLED}:
        raise SystemExit(f"not everything was installed: {dict(report.errors)} {phases}")
    provisioner.step(start + 600)  # the end: everything comes out again
    return seconds


def one_by_one(
    service: ReservationService, config: SouthboundConfig, driver: SouthboundDriver
) -> float:
    """The baseline: each reservation's plan installed on its own, in its own ordered steps."""
    ports, host_at = config.ports, config.host_at
    plans = []
    for r in service.books.store.booked():
        request = RuleRequest(r.id, r.allocations, host_at[r.src], host_at[r.dst])
        labels = labels_of(r.plan)
        assert labels is not None
        plans.append(compile_reservation(request, service.topology, ports, labels))
    began = time.perf_counter()
    for plan in plans:
        for step in install_steps(plan):
            assert step.kind is StepKind.APPLY
            driver.apply(step.rule_set)
    seconds = time.perf_counter() - began
    for plan in plans:
        for rule_set in plan.rule_sets():
            driver.remove(rule_set)
    return seconds


def measure(repeat: int, run: Callable[[], float]) -> list[float]:
    return [run() for _ in range(repeat)]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reservations", type=int, default=100)
    parser.add_argument("--switches", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    missing = missing_tools()
    if missing:
        print(f"needs root and Open vSwitch; missing: {', '.join(missing)}", file=sys.stderr)
        return 2
    service, start, config = booked_world(args.reservations, args.switches, seed=7)
    bridges = {s: str(a.bridge) for s, a in config.access.items()}
    rundir = Path(tempfile.mkdtemp(prefix="braid-prov-"))
    ovs = OvsSandbox(rundir)
    results: dict[str, list[float]] = {}
    try:
        ovs.start()
        for name, p in config.ports.switches.items():
            ovs.add_bridge(bridges[name], p.dpid)
        direct = OfctlDriver(bridges, ofctl_runner(str(rundir)))
        results["direct, one pass"] = measure(
            args.repeat, lambda: one_pass(service, config, direct, start)
        )
        results["direct, one reservation at a time"] = measure(
            args.repeat, lambda: one_by_one(service, config, direct)
        )
        results["controller, one pass"] = controller_run(ovs, config, service, start, args.repeat)
    finally:
        ovs.stop()
        shutil.rmtree(rundir, ignore_errors=True)
    report(results, args)
    return 0


def controller_run(
    ovs: OvsSandbox,
    config: SouthboundConfig,
    service: ReservationService,
    start: int,
    repeat: int,
) -> list[float]:
    process = ovs.start_controller()
    try:
        for name, p in config.ports.switches.items():
            ovs.vsctl("del-br", str(config.access[name].bridge))
            ovs.add_bridge(str(config.access[name].bridge), p.dpid, "tcp:127.0.0.1:6653")
        with ControllerDriver(ovs.controller_api) as client:
            deadline = time.monotonic() + 60
            while (
                len(client.switches()) < len(config.ports.switches) and time.monotonic() < deadline
            ):
                time.sleep(0.2)
            return measure(repeat, lambda: one_pass(service, config, client, start))
    finally:
        process.terminate()
        process.wait(10)


def report(results: dict[str, list[float]], args: argparse.Namespace) -> None:
    print(
        f"\n{args.reservations} reservations starting at once, {args.switches} switches, "
        f"{args.repeat} runs each"
    )
    print(f"{'how':<36} {'median s':>9} {'runs':>24}")
    for name, runs in results.items():
        shown = ", ".join(f"{r:.2f}" for r in runs)
        print(f"{name:<36} {statistics.median(runs):>9.2f} {shown:>24}")
    base = statistics.median(results["direct, one reservation at a time"])
    ours = statistics.median(results["direct, one pass"])
    print(f"\none pass / one at a time (direct): {ours / base:.2f}  (floor: one pass <= 2 s)")
    controller = statistics.median(results["controller, one pass"])
    print(f"controller / direct, one pass: {controller / ours:.2f}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

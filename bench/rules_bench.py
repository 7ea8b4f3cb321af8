"""Rule installation time: from a decision to rules active, direct vs controller driver.

A reservation split over four disjoint paths (seed 004's TALON rule creator,
seed 000's SDX split) is compiled and installed on a private Open vSwitch
(userspace datapath, 6 bridges) again and again, once through `ovs-ofctl`
(the direct driver, seed 003's "dpctl method") and once through the os-ken
`braid controller` (the "ODL method"). "Active" means every switch has
confirmed the change (ovs-ofctl and the controller both wait for the
switch's barrier reply). The direct driver is the baseline; the ratio is
controller / direct, measured in the same run.

Needs root and Open vSwitch. Run from the repository root:

    .venv/bin/python bench/rules_bench.py            # 30 rounds per driver
    .venv/bin/python bench/rules_bench.py --rounds 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from braid.adapters.southbound.controller import ControllerDriver
from braid.adapters.southbound.direct import OfctlDriver, ofctl_runner
from braid.adapters.southbound.driver import SouthboundDriver
from braid.adapters.southbound.ovs_sandbox import OvsSandbox, missing_tools
from braid.core.model.booking import Allocation
from braid.core.model.paths import Path as NetPath
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.rules.changes import install_steps, make_before_break, removal_steps
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.labels import LabelPool
from braid.core.rules.model import (
    HostPort,
    PortMap,
    RulePlan,
    RuleRequest,
    Step,
    StepKind,
    SwitchPorts,
)

PATHS = 4
SWITCHES = ["in", *(f"m{i}" for i in range(PATHS)), "out"]


def four_paths() -> tuple[Topology, PortMap, RuleRequest]:
    """h1 - in - m_i - out - h2 for i < 4: four disjoint paths, shares 4:3:2:1."""
    links = []
    for i in range(PATHS):
        links += [
            {"id": f"in-m{i}", "a": "in", "b": f"m{i}", "capacity": "10G"},
            {"id": f"m{i}-out", "a": f"m{i}", "b": "out", "capacity": "10G"},
        ]
    topology = topology_from_dict(
        {"nodes": [{"id": s} for s in SWITCHES], "links": [{**x, "latency_ms": 1} for x in links]}
    )
    switches = {
        "in": SwitchPorts("in", 1, {f"in-m{i}": i + 1 for i in range(PATHS)}),
        "out": SwitchPorts("out", 2, {f"m{i}-out": i + 1 for i in range(PATHS)}),
    }
    for i in range(PATHS):
        switches[f"m{i}"] = SwitchPorts(f"m{i}", 10 + i, {f"in-m{i}": 1, f"m{i}-out": 2})
    hosts = {
        "h1": HostPort("h1", "in", 100, "10.0.0.1"),
        "h2": HostPort("h2", "out", 100, "10.0.0.2"),
    }
    allocations = tuple(
        Allocation(NetPath(("in", f"m{i}", "out"), (f"in-m{i}", f"m{i}-out")), (PATHS - i) * 10**8)
        for i in range(PATHS)
    )
    return topology, PortMap(switches, hosts), RuleRequest("bench", allocations, "h1", "h2")


def run_steps(driver: SouthboundDriver, plan_steps: Sequence[Step]) -> None:
    for step in plan_steps:
        if step.kind is StepKind.APPLY:
            driver.apply(step.rule_set)
        else:
            driver.remove(step.rule_set)


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1000


def measure(
    driver: SouthboundDriver, plan: RulePlan, moved: RulePlan, rounds: int
) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {"install": [], "reroute": [], "remove": []}
    want = {r.switch: r for r in plan.rule_sets()}
    for _ in range(rounds):
        figures["install"].append(timed(lambda: run_steps(driver, install_steps(plan))))
        dumped = {s: r for s, r in driver.dump().items() if not r.empty}
        if dumped != want:
            raise SystemExit("the switches do not hold the plan after installing it")
        figures["reroute"].append(timed(lambda: run_steps(driver, make_before_break(plan, moved))))
        figures["remove"].append(timed(lambda: run_steps(driver, removal_steps(moved))))
    return figures


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"median {statistics.median(values):7.1f} ms   p90 {p90:7.1f} ms"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)
    if os.geteuid() != 0 or missing_tools():
        print(f"needs root and Open vSwitch (missing: {', '.join(missing_tools()) or 'root'})")
        return 1
    topology, ports, request = four_paths()
    compile_ms = [timed(lambda: compile_reservation(request, topology, ports)) for _ in range(200)]
    plan = compile_reservation(request, topology, ports)
    reversed_shares = tuple(
        Allocation(a.path, b.bandwidth)
        for a, b in zip(request.allocations, request.allocations[::-1], strict=True)
    )
    moved_request = RuleRequest("bench", reversed_shares, "h1", "h2")
    moved = compile_reservation(moved_request, topology, ports, LabelPool().with_plans([plan]))
    flows = sum(len(r.flows) for r in plan.rule_sets())
    groups = sum(len(r.groups) for r in plan.rule_sets())
    print(f"4-path split: {len(plan.rule_sets())} switches, {flows} flows, {groups} groups")
    print(f"compile (pure, in-process): {summary(compile_ms)}")
    results = {}
    rundir = Path(tempfile.mkdtemp(prefix="braid-ovs-"))
    sandbox = OvsSandbox(rundir)
    try:
        sandbox.start()
        for name in SWITCHES:
            sandbox.add_bridge(name, ports.switch(name).dpid)
        direct = OfctlDriver({s: s for s in SWITCHES}, ofctl_runner(str(rundir)))
        results["direct"] = measure(direct, plan, moved, args.rounds)
        results["controller"] = _with_controller(sandbox, ports, plan, moved, args.rounds)
    finally:
        sandbox.stop()
        shutil.rmtree(rundir, ignore_errors=True)
    _report(results)
    return 0


def _with_controller(
    sandbox: OvsSandbox, ports: PortMap, plan: RulePlan, moved: RulePlan, rounds: int
) -> dict[str, list[float]]:
    process = sandbox.start_controller()
    try:
        for name in SWITCHES:
            sandbox.vsctl("del-br", name)
            sandbox.add_bridge(name, ports.switch(name).dpid, "tcp:127.0.0.1:6653")
        with ControllerDriver(sandbox.controller_api) as driver:
            deadline = time.monotonic() + 30
            while len(driver.switches()) < len(SWITCHES):
                if time.monotonic() > deadline:
                    raise SystemExit("switches did not connect to the controller")
                time.sleep(0.1)
            return measure(driver, plan, moved, rounds)
    finally:
        process.terminate()
        process.wait(timeout=10)


def _report(results: dict[str, dict[str, list[float]]]) -> None:
    print(f"\n{'driver':<11} {'phase':<8} time from decision to rules confirmed by every switch")
    for driver, figures in results.items():
        for phase, values in figures.items():
            print(f"{driver:<11} {phase:<8} {summary(values)}")
    print()
    for phase in ("install", "reroute", "remove"):
        ratio = statistics.median(results["controller"][phase]) / statistics.median(
            results["direct"][phase]
        )
        print(f"controller / direct, {phase:<8}: {ratio:5.2f}x (median over median)")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

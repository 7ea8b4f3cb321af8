"""Delivery sampling at scale: one pass over 100 installed reservations on 20 switches.

The reservations of `provisioning_bench.py` (booked through the service,
installed by one provisioning pass on a private Open vSwitch: 20 userspace
bridges in a ring with chords) are sampled as `braid serve` samples them:
the figure is the time of one sampling pass (find the installed ones,
compile their plans, read the counters, judge them), which must stay well
under the sampling interval (5 s by default). Baseline, same run: reading
each reservation's counters on its own (`dump-flows` by its cookie and
`meter-stats` per switch it counts on), as a reader without a pass would.

With `--driver controller` the bridges are driven by a `braid controller`
and the counters read through its API (flow and meter statistics over its
OpenFlow connections) instead of `ovs-ofctl`.

Needs root and Open vSwitch. From the repository root:

    .venv/bin/python bench/delivery_pass_bench.py [--reservations 100] [--switches 20] \
        [--driver direct|controller]
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from braid.adapters.southbound.controller import ControllerDriver
from braid.adapters.southbound.controller_stats import ControllerStats
from braid.adapters.southbound.counters import SwitchCounters
from braid.adapters.southbound.direct import OfctlDriver, ofctl_runner
from braid.adapters.southbound.driver import SouthboundDriver
from braid.adapters.southbound.fleet import DriverTables
from braid.adapters.southbound.ofctl_stats import OfctlStats
from braid.adapters.southbound.ovs_sandbox import OvsSandbox, missing_tools
from braid.adapters.southbound.switch_stats import SwitchStats
from braid.adapters.wiring_files import SouthboundConfig
from braid.app.delivery.history import DeliveryHistory
from braid.app.delivery.memory import MemoryDeliveryAudit
from braid.app.delivery.sampler import DeliverySampler
from braid.app.delivery.targets import ReservationTargets
from braid.app.provisioning.memory import MemoryProvisioningStore
from braid.app.provisioning.provisioner import Provisioner, Wiring
from braid.app.reservations.service import ReservationService
from provisioning_bench import booked_world


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reservations", type=int, default=100)
    parser.add_argument("--switches", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--driver", choices=("direct", "controller"), default="direct")
    args = parser.parse_args(argv)
    if missing_tools():
        print(f"needs root and Open vSwitch; missing: {', '.join(missing_tools())}")
        return 2
    service, start, config = booked_world(args.reservations, args.switches, seed=7)
    rundir = Path(tempfile.mkdtemp(prefix="braid-dlv-"))
    ovs = OvsSandbox(rundir)
    try:
        ovs.start()
        with driven_by(ovs, config, args.driver) as (driver, stats):
            passes, alone = sample(service, start, config, driver, stats, args)
    finally:
        ovs.stop()
        shutil.rmtree(rundir, ignore_errors=True)
    print(
        f"{args.reservations} reservations on {args.switches} switches, {args.repeat} runs, "
        f"{args.driver} driver"
    )
    print("| how | seconds (median) | runs |\n|---|---|---|")
    for name, runs in (("one sampling pass", passes), ("each reservation on its own", alone)):
        shown = ", ".join(f"{r:.2f}" for r in runs)
        print(f"| {name} | {statistics.median(runs):.2f} | {shown} |")
    return 0


def sample(
    service: ReservationService,
    start: int,
    config: SouthboundConfig,
    driver: SouthboundDriver,
    stats: SwitchStats,
    args: argparse.Namespace,
) -> tuple[list[float], list[float]]:
    """Install every reservation in one pass, then time sampling passes and lone reads."""
    store = MemoryProvisioningStore()
    # The sandbox's bridges have no ports to queue on: the rules only route.
    wiring = Wiring(config.ports, config.host_at, enforce=False)
    dpids = {s: p.dpid for s, p in config.ports.switches.items()}
    tables = DriverTables(dict.fromkeys(config.ports.switches, driver), dpids)
    repo = service.books.store
    provisioner = Provisioner(
        repo, store, tables, wiring, lambda: service.topology, holder="bench", lead=0
    )
    provisioner.step(start)
    targets = ReservationTargets(repo, store, wiring, lambda: service.topology)
    counters = SwitchCounters(stats)
    sampler = DeliverySampler(targets, counters, DeliveryHistory(), MemoryDeliveryAudit())
    passes, alone = [], []
    for k in range(args.repeat):
        began = time.perf_counter()
        done = sampler.sample(start + k)
        passes.append(time.perf_counter() - began)
        if done.failed or len(done.sampled) != args.reservations:
            raise SystemExit(f"not every reservation was sampled: {done.failed}")
        installed = targets.installed(start)
        began = time.perf_counter()
        for t in installed:
            counters.read(t.plan, t.src, t.dst)
        alone.append(time.perf_counter() - began)
    return passes, alone


@contextlib.contextmanager
def driven_by(
    ovs: OvsSandbox, config: SouthboundConfig, driver: str
) -> Iterator[tuple[SouthboundDriver, SwitchStats]]:
    """The wiring's bridges in `ovs`, and the driver and counters of `driver`'s kind."""
    bridges = {s: str(a.bridge) for s, a in config.access.items()}
    if driver == "direct":
        for name, p in config.ports.switches.items():
            ovs.add_bridge(bridges[name], p.dpid)
        runner = ofctl_runner(str(ovs.rundir))
        yield OfctlDriver(bridges, runner), OfctlStats(bridges, runner)
        return
    process = ovs.start_controller()
    try:
        for name, p in config.ports.switches.items():
            ovs.add_bridge(bridges[name], p.dpid, "tcp:127.0.0.1:6653")
        with ControllerDriver(ovs.controller_api) as client:
            deadline = time.monotonic() + 60
            while len(client.switches()) < len(bridges) and time.monotonic() < deadline:
                time.sleep(0.2)
            dpids = {s: p.dpid for s, p in config.ports.switches.items()}
            yield client, ControllerStats(client, dpids)
    finally:
        process.terminate()
        process.wait(10)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

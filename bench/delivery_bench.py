"""Delivery counters against iperf3: what braid counts on the switches vs what TCP carried.

On Mininet (service experiment's network: two 100 Mbit/s paths h1-s1-…-s3-h2,
userspace OVS), the reservation service books 60 Mbit/s and the provisioning
loop of `braid serve` installs it; braid's delivery sampler reads the
reservation's counters every second through `ovs-ofctl` (as `braid serve`
does) while iperf3 runs, first TCP as fast as it goes, then TCP capped at
half the booked rate (iperf3 -b). Printed: each interval's offered and delivered Mbit/s and
status, and per phase braid's delivered bytes against iperf3's received
bytes (braid counts whole Ethernet frames, iperf3 payload, so braid's count
is higher by the headers, about 0.7 % at MTU 9000, and by retransmissions).

Needs root, Mininet, iperf3; takes the host's emulation lock. From the repo root:

    .venv/bin/python bench/delivery_bench.py [--seconds 8]
"""

from __future__ import annotations

import argparse
import math
import time

from braid.adapters.emulation.iperf import ClientOptions
from braid.adapters.emulation.network import HostSpec
from braid.adapters.southbound.counters import SwitchCounters
from braid.adapters.southbound.ofctl_stats import OfctlStats
from braid.app.delivery.history import DeliveryHistory
from braid.app.delivery.loop import DeliveryLoop
from braid.app.delivery.memory import MemoryDeliveryAudit
from braid.app.delivery.ports import Target
from braid.app.delivery.reports import reservation_delivery
from braid.app.delivery.sampler import DeliverySampler
from braid.app.provisioning.reservations import ReservationPlans, Wiring
from braid.core.delivery import DeliverySample, delivery_report
from braid.core.model.instants import format_instant
from braid.emulation.experiments.service import provisioning_loop, service_topology
from braid.emulation.session import EmulationSession
from braid.emulation.traffic import Flowset, measure

MBPS = 1_000_000
PATH_BPS = 100 * MBPS
BOOKED_BPS = 60 * MBPS


class Booked:
    """The one reservation as a delivery target, compiled as the provisioner compiles it."""

    def __init__(self, session: EmulationSession, rid: str) -> None:
        ports = session.net.port_map
        self.wiring = Wiring(ports, {"s1": "h1", "s3": "h2"})
        self.plans = ReservationPlans(session.store, self.wiring, lambda: session.service.topology)
        self.rid = rid

    def installed(self, now: int) -> list[Target]:
        plan = self.plans.plan(self.rid, now)
        assert plan is not None
        src, dst = self.wiring.ports.host("h1"), self.wiring.ports.host("h2")
        return [Target(self.rid, plan, src, dst, BOOKED_BPS)]

    def kept(self) -> set[str]:
        return {self.rid}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=8)
    args = parser.parse_args()
    hosts = [HostSpec("h1", "s1"), HostSpec("h2", "s3")]
    with EmulationSession(service_topology(PATH_BPS), hosts) as session:
        loop = provisioning_loop(session, lead=1)
        start = math.ceil(time.time()) + 3
        window = {"start": format_instant(start), "end": format_instant(start + 600)}
        rid = session.reserve("s1", "s3", BOOKED_BPS, 600, max_paths=1, **window).record.id
        time.sleep(max(0.0, start + 1 - time.time()))
        history = DeliveryHistory(600)
        counters = SwitchCounters(OfctlStats(dict(session.net.bridges)))
        sampler = DeliverySampler(Booked(session, rid), counters, history, MemoryDeliveryAudit())
        sampling = DeliveryLoop(sampler, lambda: int(time.time()), 1.0)
        sampling.run_pass()
        sampling.start()
        try:
            phases = [
                ("tcp", ClientOptions(args.seconds, omit=0)),
                ("tcp-capped", ClientOptions(args.seconds, omit=0, rate_bps=BOOKED_BPS // 2)),
            ]
            for label, options in phases:
                _phase(session, history, rid, label, options)
        finally:
            sampling.stop()
            loop.stop()


def _phase(
    session: EmulationSession,
    history: DeliveryHistory,
    rid: str,
    label: str,
    options: ClientOptions,
) -> None:
    time.sleep(2.0)  # a quiet interval between phases
    before = _last(history, rid)
    flowset = Flowset(label, "h1", "h2", options)
    got = measure(session, [flowset]).results[label]
    time.sleep(2.5)  # two more samples: the last frames are counted
    after = _last(history, rid)
    seen = history.get(rid)
    assert seen is not None
    found = reservation_delivery(rid, BOOKED_BPS, seen)
    report = found.directions[0].report
    print(f"\n== {label}: iperf3 {got.received_bps / MBPS:.2f} Mbit/s received "
          f"over {got.seconds:.1f} s; booked {BOOKED_BPS / MBPS:g}")  # fmt: skip
    print(f"{'t (s)':>5} {'offered':>9} {'delivered':>9} {'% booked':>9}  status then")
    samples = list(seen.forward)
    for k, i in enumerate(report.intervals):
        if before.at <= i.start < after.at:
            then = delivery_report(samples[: k + 2], BOOKED_BPS).status.value
            rates = f"{i.offered_bps / MBPS:>9.2f} {i.delivered_bps / MBPS:>9.2f}"
            print(f"{i.start - before.at:>5} {rates} {100 * i.booked_share:>8.1f}%  {then}")
    braid_bytes = after.delivered_bytes - before.delivered_bytes
    iperf_bytes = got.received_bps * got.seconds / 8
    print(f"braid delivered {braid_bytes:,} bytes (offered "
          f"{after.offered_bytes - before.offered_bytes:,}); iperf3 received "
          f"{iperf_bytes:,.0f}; braid / iperf3 = {braid_bytes / iperf_bytes:.4f}")  # fmt: skip


def _last(history: DeliveryHistory, rid: str) -> DeliverySample:
    seen = history.get(rid)
    assert seen is not None and seen.forward
    return seen.forward[-1]


if __name__ == "__main__":
    main()

"""A service, fake switches holding its reservations' rules, and a delivery sampler on them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from braid.app.delivery.history import DeliveryHistory
from braid.app.delivery.memory import MemoryDeliveryAudit
from braid.app.delivery.sampler import DeliverySampler
from braid.app.delivery.targets import ReservationTargets
from braid.app.provisioning.memory import MemoryProvisioningStore
from braid.app.provisioning.provisioner import Provisioner, Wiring
from braid.app.records import User
from braid.app.reservations.commands import Reserve
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.service import ReservationService
from braid.core.model.instants import format_instant
from braid.core.model.topology import topology_to_dict
from braid.testing.fake_counters import FakeDeliveryCounters
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_probe import FakeCircuitChecker
from braid.testing.fake_tables import FakeSwitchTables
from tests.unit.core.rules.scenarios import DST_IP, SRC_IP, tcp, two_path_scenario

T0 = 1_900_000_000
START = T0 + 100
EVERY = 5
ALICE = User("alice", "user")
HOSTS = {"s1": "h1", "s3": "h2", "s2": "h3"}


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


class World:
    def __init__(self, keep: int = 120, *, check: bool = False) -> None:
        """`check`: the provisioner probes each reservation it installs (the circuit check),
        as `braid serve` does on switches it drives directly."""
        scenario = two_path_scenario()
        self.topology = scenario.topology
        self.clock = Clock()
        self.repo = MemoryRepository()
        self.service = ReservationService(self.repo, clock=self.clock)
        self.service.start(topology_to_dict(scenario.topology))
        self.network = FakeNetwork(scenario.topology, scenario.ports)
        self.store = MemoryProvisioningStore()
        self.wiring = Wiring(scenario.ports, HOSTS)
        self.provisioner = Provisioner(
            self.repo,
            self.store,
            FakeSwitchTables(self.network),
            self.wiring,
            lambda: self.service.topology,
            holder="replica-1",
            lead=5,
            checker=FakeCircuitChecker(self.network, scenario.ports) if check else None,
        )
        self.counters = FakeDeliveryCounters(self.network)
        self.history = DeliveryHistory(keep)
        self.audit = MemoryDeliveryAudit()
        targets = ReservationTargets(
            self.repo, self.store, self.wiring, lambda: self.service.topology
        )
        self.sampler = DeliverySampler(targets, self.counters, self.history, self.audit)

    def book(self, mbps: int = 8, start: int = START, end: int = START + 3600) -> str:
        body: dict[str, Any] = {
            "src": "s1",
            "dst": "s3",
            "bandwidth": mbps,
            "start": format_instant(start),
            "end": format_instant(end),
        }
        return self.service.reserve(ALICE, Reserve.parse(body)).record.id

    def install(self, at: int = START) -> None:
        self.clock.now = at
        self.provisioner.step(at, reconcile=True)

    def send(self, megabits: float, flows: int = 4) -> None:
        """`megabits` from h1 to h2 in `flows` TCP flows (one big frame each: the fake
        counts bytes, it does not time them)."""
        size = int(megabits * 1_000_000 / 8 / flows)
        for i in range(flows):
            self.network.send("h1", replace(tcp(SRC_IP, DST_IP, 40000 + i, 5201), size=size))

    def interval(self, offered_share: float, booked_mbps: int = 8) -> None:
        """One sampling interval's traffic at `offered_share` of the booked rate, sampled."""
        self.send(offered_share * booked_mbps * EVERY)
        self.clock.now += EVERY
        self.sampler.sample(self.clock.now)

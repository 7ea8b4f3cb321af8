"""The provisioner over fake switches: rules follow the reservations' windows, whatever fails."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.adapters.prometheus import PrometheusMetrics
from braid.app.provisioning.memory import MemoryProvisioningStore
from braid.app.provisioning.provisioner import Provisioner, Wiring
from braid.app.provisioning.runner import ProvisioningLoop
from braid.app.records import User
from braid.app.reservations.commands import Modify, Reserve
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.observation import Observation
from braid.app.reservations.service import ReservationService
from braid.core.model.instants import format_instant
from braid.core.model.topology import topology_to_dict
from braid.core.provisioning.status import Phase
from braid.core.rules.model import FlowRule, Match, Output, RuleSet
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_tables import Crash, FakeSwitchTables
from tests.unit.core.rules.scenarios import (
    BYSTANDER_IP,
    DST_IP,
    SRC_IP,
    tcp,
    two_path_scenario,
)

T0 = 1_900_000_000
LEAD = 5
ALICE = User("alice", "user")


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


class World:
    """A service, its store, fake switches, and a provisioner acting on them."""

    def __init__(self) -> None:
        scenario = two_path_scenario()
        self.clock = Clock()
        self.repo = MemoryRepository()
        self.service = ReservationService(self.repo, clock=self.clock)
        self.service.start(topology_to_dict(scenario.topology))
        self.network = FakeNetwork(scenario.topology, scenario.ports)
        self.tables = FakeSwitchTables(self.network)
        self.store = MemoryProvisioningStore()
        self.wiring = Wiring(scenario.ports, {"s1": "h1", "s3": "h2", "s2": "h3"})

    def provisioner(self, holder: str = "replica-1") -> Provisioner:
        return Provisioner(
            self.repo,
            self.store,
            self.tables,
            self.wiring,
            lambda: self.service.topology,
            holder=holder,
            lead=LEAD,
        )

    def book(self, src: str = "s1", bw: int = 400, start: int = 100, end: int = 200) -> str:
        body: dict[str, Any] = {
            "src": src,
            "dst": "s3",
            "bandwidth": bw,
            "start": format_instant(T0 + start),
            "end": format_instant(T0 + end),
            "max_paths": 3,
        }
        return self.service.reserve(ALICE, Reserve.parse(body)).record.id

    def phase(self, rid: str) -> Phase | None:
        status = self.store.statuses().get(rid)
        return None if status is None else status.phase

    def carries(self, src_host: str = "h1") -> bool:
        ip = SRC_IP if src_host == "h1" else BYSTANDER_IP
        there = self.network.send(src_host, tcp(ip, DST_IP, 40000, 5201))
        back = self.network.send("h2", tcp(DST_IP, ip, 5201, 40000))
        return [d.host for d in there] == ["h2"] and [d.host for d in back] == [src_host]

    def braid_tables(self) -> dict[str, RuleSet]:
        return {s: t for s in self.tables.switches() if not (t := self.tables.read(s)).empty}


def test_rules_go_in_a_lead_before_the_start_and_come_out_at_the_end() -> None:
    world = World()
    provisioner = world.provisioner()
    rid = world.book()
    world.clock.now = T0 + 100 - LEAD - 1
    provisioner.step(world.clock.now)
    assert world.phase(rid) is None and not world.carries()  # "scheduled": nothing yet
    world.clock.now += 1
    report = provisioner.step(world.clock.now)
    assert report.leader and report.steps > 0 and report.errors == {}
    assert world.phase(rid) is Phase.INSTALLED and world.carries()
    assert provisioner.step(world.clock.now).steps == 0  # nothing to change
    world.clock.now = T0 + 200
    provisioner.step(world.clock.now)
    assert world.phase(rid) is Phase.REMOVED and not world.carries()
    assert world.braid_tables() == {}


def test_a_booking_back_to_back_with_the_last_waits_its_lead_then_takes_over() -> None:
    """Between the same hosts, the next booking's rules have the last one's keys: in its
    lead time it waits (not failed) and at its start its rules replace the last's; one
    that overlaps the last still clashes."""
    world = World()
    provisioner = world.provisioner()
    first = world.book(bw=400, start=100, end=200)
    second = world.book(bw=300, start=200, end=300)
    world.clock.now = T0 + 200 - LEAD
    report = provisioner.step(world.clock.now)
    assert report.errors == {}
    assert world.phase(first) is Phase.INSTALLED and world.phase(second) is None
    world.clock.now = T0 + 200
    assert provisioner.step(world.clock.now).errors == {}
    assert world.phase(first) is Phase.REMOVED and world.phase(second) is Phase.INSTALLED
    assert world.carries()
    overlapping = world.book(bw=100, start=250, end=400)
    world.clock.now = T0 + 250
    assert set(provisioner.step(world.clock.now).errors) == {overlapping}
    assert world.phase(overlapping) is Phase.FAILED


def test_cancel_removes_every_flow_and_group_and_foreign_rules_stay() -> None:
    world = World()
    foreign = FlowRule(10, Match(in_port=9), (Output(1),), cookie=0x1234)
    world.network.apply(RuleSet.of("s2", world.tables.dpid("s2"), [foreign]))
    provisioner = world.provisioner()
    rid = world.book(start=50)
    world.clock.now = T0 + 60
    provisioner.step(world.clock.now)
    assert world.carries()
    world.service.cancel(ALICE, rid)
    provisioner.step(world.clock.now)
    assert world.phase(rid) is Phase.REMOVED and world.braid_tables() == {}
    assert foreign in world.network.switches["s2"].dump().flows


def test_a_refusing_switch_fails_its_reservations_only_and_is_retried() -> None:
    world = World()
    provisioner = world.provisioner()
    upper = world.book("s2", bw=100, start=10)  # h3 on s2 to h2 on s3: never through s1
    lower = world.book("s1", bw=400, start=10)  # h1 on s1
    world.tables.refuse["s1"] = "connection refused"
    world.clock.now = T0 + 10
    report = provisioner.step(world.clock.now)
    assert report.errors == {"s1": "connection refused"}
    failed = world.store.statuses()[lower]
    assert (failed.phase, failed.switch, failed.error) == (
        Phase.FAILED,
        "s1",
        "connection refused",
    )
    assert world.phase(upper) is Phase.INSTALLED and world.carries("h3")
    del world.tables.refuse["s1"]
    provisioner.step(world.clock.now)  # backing off: not tried again yet
    assert world.phase(lower) is Phase.FAILED
    world.clock.now += 1  # the back-off after one failure is one second
    provisioner.step(world.clock.now)
    assert world.phase(lower) is Phase.INSTALLED and world.carries("h1")


def test_a_quick_pass_reads_no_switch_and_a_reconcile_repairs_drift() -> None:
    world = World()
    provisioner = world.provisioner()
    world.book(start=10)
    world.clock.now = T0 + 10
    provisioner.step(world.clock.now)
    reads = world.tables.reads
    report = provisioner.step(world.clock.now, reconcile=False)
    assert world.tables.reads == reads and report.steps == 0
    assert report.next_change == T0 + 200  # the reservation's end
    tampered = world.tables.read("s3")
    world.network.remove(tampered)  # someone deletes braid's rules behind its back
    assert not world.carries()
    assert provisioner.step(world.clock.now).steps > 0
    assert world.carries()


def test_only_the_lease_holder_acts() -> None:
    world = World()
    first, second = world.provisioner("a"), world.provisioner("b")
    world.book(start=10)
    world.clock.now = T0 + 10
    assert first.step(world.clock.now).leader
    assert not second.step(world.clock.now).leader
    world.clock.now += 16  # the holder stopped renewing: the lease lapses
    assert second.step(world.clock.now).leader


@settings(max_examples=40, deadline=None)
@given(crash_after=st.integers(0, 30), cancel_one=st.booleans())
def test_a_pass_killed_at_any_change_is_put_right_by_the_next(
    crash_after: int, cancel_one: bool
) -> None:
    world = World()
    rids = [world.book("s1", bw=400, start=10), world.book("s2", bw=100, start=10)]
    world.clock.now = T0 + 10
    world.provisioner().step(world.clock.now)
    if cancel_one:
        world.service.cancel(ALICE, rids[0])
    # Between the same hosts as the first: it can only be carried once the first is gone.
    rids.append(world.book("s1", bw=300, start=10, end=300))
    world.tables.crash_after = world.tables.changes + crash_after
    with _maybe_crash():
        world.provisioner("dying").step(world.clock.now)
    world.tables.crash_after = None
    world.clock.now += 16  # the dead replica's lease lapses
    restarted = world.provisioner("restarted")
    restarted.step(world.clock.now)
    assert restarted.step(world.clock.now).steps == 0  # 0 missing, 0 stale
    first, second, third = (world.phase(rid) for rid in rids)
    assert first is (Phase.REMOVED if cancel_one else Phase.INSTALLED)
    assert second is Phase.INSTALLED
    assert third is (Phase.INSTALLED if cancel_one else Phase.FAILED)
    if not cancel_one:
        assert "clash" in str(world.store.statuses()[rids[2]].error)
    assert world.carries("h3") and world.carries("h1")


class _maybe_crash:  # noqa: N801 - a context manager: the pass may end before the crash point
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, *_: object) -> bool:
        return kind is Crash


class _Watching(FakeSwitchTables):
    """Fake switch tables that check, after every change, that a flow still gets through."""

    def __init__(self, network: FakeNetwork, check: Any) -> None:
        super().__init__(network)
        self.check = check
        self.checked = 0

    def apply(self, rule_set: RuleSet) -> None:
        super().apply(rule_set)
        self._after()

    def remove(self, rule_set: RuleSet) -> None:
        super().remove(rule_set)
        self._after()

    def _after(self) -> None:
        self.checked += 1
        assert self.check(), f"a live flow was cut after change {self.checked}"


def test_a_modification_is_swapped_make_before_break_on_the_switches() -> None:
    world = World()
    rid = world.book("s1", bw=300, start=10)
    world.clock.now = T0 + 10
    world.provisioner().step(world.clock.now)
    before = world.tables.read("s1")
    # Growing past what its path carries re-plans it over other paths, with new labels.
    world.service.modify(ALICE, rid, Modify(bandwidth=1300 * 10**6))
    world.tables = _Watching(world.network, world.carries)
    report = world.provisioner("replica-1").step(world.clock.now)
    assert report.steps > 0 and world.tables.checked == report.steps
    assert world.tables.read("s1") != before and world.phase(rid) is Phase.INSTALLED


def test_the_loop_installs_on_a_change_and_counts_states() -> None:
    world = World()
    metrics = PrometheusMetrics()
    loop = ProvisioningLoop(world.provisioner(), world.clock, tick=0.05, metrics=metrics)
    world.service.on_change.append(loop.wake)
    world.clock.now = T0 + 10
    loop.start()
    try:
        rid = world.book(start=10)
        deadline = time.monotonic() + 10
        while world.phase(rid) is not Phase.INSTALLED and time.monotonic() < deadline:
            time.sleep(0.02)
        assert world.phase(rid) is Phase.INSTALLED and world.carries()
    finally:
        loop.stop()
    quiet = Observation((), {}, 0, None, 0.0, 0)
    exposed = metrics.render(lambda: quiet).decode()
    assert 'braid_provisioning_reservations{state="installed"} 1.0' in exposed
    assert "braid_provisioning_pass_seconds_count" in exposed


def test_an_unreachable_switch_is_tried_after_1_2_4_up_to_60_s_and_logged_once_a_try(
    caplog: pytest.LogCaptureFixture,
) -> None:
    world = World()
    world.book("s1", bw=400, start=10, end=5000)
    world.tables.refuse["s1"] = "connection refused"
    loop = ProvisioningLoop(world.provisioner(), world.clock)
    began = world.clock.now = T0 + 10
    tried_at: list[int] = []
    with caplog.at_level(logging.WARNING, logger="braid.app.provisioning.runner"):
        for _ in range(400):  # a pass a second, as the loop runs them (the fake clock's)
            before = world.tables.tries.get("s1", 0)
            loop.run_pass()
            if world.tables.tries.get("s1", 0) > before:
                tried_at.append(world.clock.now - began)
            world.clock.now += 1
    assert tried_at == [0, 1, 3, 7, 15, 31, 63, 123, 183, 243, 303, 363]
    said = [r.getMessage() for r in caplog.records if "switch s1" in r.getMessage()]
    assert len(said) == len(tried_at)  # once per try, not once per pass
    assert said[0].endswith("connection refused (failed 1 time(s) in a row; next try in 1 s)")
    assert said[6].endswith("(failed 7 time(s) in a row; next try in 60 s)")
    assert all("s2" not in r.getMessage() and "s3" not in r.getMessage() for r in caplog.records)
    caplog.clear()
    del world.tables.refuse["s1"]
    with caplog.at_level(logging.WARNING, logger="braid.app.provisioning.runner"):
        for _ in range(120):
            loop.run_pass()
            world.clock.now += 1
    assert [r.getMessage() for r in caplog.records] == ["provisioning: switch s1 answers again"]
    assert world.carries()

"""The provisioner probes a reservation's paths once it is installed, when it is offered how."""

from __future__ import annotations

from collections.abc import Sequence

from braid.app.provisioning.ports import SwitchError
from braid.app.provisioning.provisioner import Provisioner
from braid.core.provisioning.circuit_check import CheckResult, circuit_probes
from braid.core.provisioning.status import Phase
from braid.core.rules.model import RulePlan, RuleSet
from braid.testing.fake_probe import FakeCircuitChecker
from tests.unit.app.provisioning.test_provisioner import LEAD, T0, World


def provisioner(world: World, checker: FakeCircuitChecker | None) -> Provisioner:
    return Provisioner(
        world.repo,
        world.store,
        world.tables,
        world.wiring,
        lambda: world.service.topology,
        holder="replica-1",
        lead=LEAD,
        checker=checker,
    )


def test_an_installed_reservation_is_checked_once_and_verified() -> None:
    world = World()
    checker = FakeCircuitChecker(world.network, world.wiring.ports)
    loop = provisioner(world, checker)
    rid = world.book(start=10)
    world.clock.now = T0 + 10
    loop.step(world.clock.now)
    status = world.store.statuses()[rid]
    assert status.phase is Phase.INSTALLED and status.verified is True
    assert status.check is not None and "verified" in status.check
    loop.step(world.clock.now + 1)
    assert checker.checked == [rid]  # not again while it stays installed
    assert world.store.statuses()[rid].verified is True


def test_a_dead_link_on_its_path_is_recorded_on_the_status() -> None:
    world = World()
    loop = provisioner(world, FakeCircuitChecker(world.network, world.wiring.ports))
    rid = world.book(start=10)
    world.clock.now = T0 + 10
    plan = loop.source.plan(rid, world.clock.now)
    assert plan is not None
    last = circuit_probes(plan, world.wiring.ports).probes[0].hops[-1]
    world.network.set_link(last.link, up=False)
    loop.step(world.clock.now)
    status = world.store.statuses()[rid]
    assert status.phase is Phase.INSTALLED and status.verified is False
    where = f"between {last.previous} and {last.switch} (link {last.link})"
    assert status.check is not None and where in status.check


def test_without_a_checker_the_check_is_skipped() -> None:
    world = World()
    rid = world.book(start=10)
    world.clock.now = T0 + 10
    provisioner(world, None).step(world.clock.now)
    status = world.store.statuses()[rid]
    assert status.phase is Phase.INSTALLED and (status.verified, status.check) == (None, None)


class Unreachable:
    def check(self, plans: Sequence[RulePlan]) -> list[CheckResult]:
        raise SwitchError("s4", "connection refused")


def test_a_check_that_cannot_run_leaves_it_installed_and_unverified() -> None:
    world = World()
    loop = provisioner(world, None)
    loop.checker = Unreachable()
    rid = world.book(start=10)
    world.clock.now = T0 + 10
    loop.step(world.clock.now)
    status = world.store.statuses()[rid]
    assert status.phase is Phase.INSTALLED and status.verified is None
    assert status.check == "not checked: switch s4: connection refused"


class Counting(FakeCircuitChecker):
    def __init__(self, world: World) -> None:
        super().__init__(world.network, world.wiring.ports)
        self.calls = 0

    def check(self, plans: Sequence[RulePlan]) -> list[CheckResult]:
        self.calls += 1
        return super().check(plans)


def test_the_reservations_installed_in_one_pass_are_checked_together() -> None:
    world = World()
    checker = Counting(world)
    loop = provisioner(world, checker)
    first, second = world.book("s1", bw=100, start=10), world.book("s2", bw=100, start=10)
    world.clock.now = T0 + 10
    loop.step(world.clock.now)
    statuses = world.store.statuses()
    assert sorted(checker.checked) == sorted([first, second]) and checker.calls == 1
    assert statuses[first].verified is True and statuses[second].verified is True


def test_a_rule_repaired_behind_braids_back_is_checked_again() -> None:
    world = World()
    checker = FakeCircuitChecker(world.network, world.wiring.ports)
    loop = provisioner(world, checker)
    rid = world.book(start=10)
    world.clock.now = T0 + 10
    loop.step(world.clock.now)
    plan = loop.source.plan(rid, world.clock.now)
    assert plan is not None
    hop = circuit_probes(plan, world.wiring.ports).probes[0].hops[-1]
    switch = world.network.switches[hop.switch]
    rule = next(f for f in switch.flows.values() if f.match.vlan_vid == hop.vlan)
    world.network.remove(RuleSet.of(hop.switch, switch.dpid, [rule]))
    loop.step(world.clock.now + 1)  # a reconciling pass puts it back
    assert checker.checked == [rid, rid]
    status = world.store.statuses()[rid]
    assert status.phase is Phase.INSTALLED and status.verified is True
    assert status.since == T0 + 10  # still the same installation

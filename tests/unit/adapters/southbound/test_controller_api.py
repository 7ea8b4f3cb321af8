"""The controller driver and the controller's HTTP API, with a fake behind the API."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from braid.adapters.southbound.controller import ControllerDriver, SwitchNotConnectedError
from braid.adapters.southbound.desired import DesiredState
from braid.adapters.southbound.driver import (
    NotConnectedError,
    ReconcileReport,
    SouthboundDriver,
    SouthboundError,
)
from braid.adapters.southbound.http_api import make_server
from braid.adapters.southbound.switch_stats import FlowCount
from braid.core.delivery.samples import PacketsBytes
from braid.core.errors import InputError
from braid.core.rules.changes import install_steps, removal_steps
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.model import Action, RuleSet
from braid.core.rules.tables import difference
from braid.testing import fake_stats
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_switch import FakeSwitch
from tests.unit.core.rules.scenarios import run, two_path_scenario


class FakeBackend:
    """What the os-ken app does, on fake switches; `offline` switches are not connected.

    Over a fake `network` (its switches, then) packet-outs travel its links.
    """

    def __init__(self, dpids: dict[str, int], network: FakeNetwork | None = None) -> None:
        self.network = network
        self.switches = (
            network.switches
            if network is not None
            else {name: FakeSwitch(name, dpid) for name, dpid in dpids.items()}
        )
        self.desired = DesiredState()
        self.offline: set[str] = set()
        self.broken: set[str] = set()

    def _reach(self, name: str) -> FakeSwitch | None:
        if name in self.broken:
            raise SouthboundError(name, "switch refused a message: OpenFlow error type 6 code 0")
        return None if name in self.offline else self.switches[name]

    def apply(self, rule_set: RuleSet) -> bool:
        self.desired.add(rule_set)
        switch = self._reach(rule_set.switch)
        if switch is not None:
            switch.apply(rule_set)
        return switch is not None

    def remove(self, rule_set: RuleSet) -> bool:
        self.desired.discard(rule_set)
        switch = self._reach(rule_set.switch)
        if switch is not None:
            switch.remove(rule_set)
        return switch is not None

    def dump(self) -> list[RuleSet]:
        return [s.dump() for n, s in sorted(self.switches.items()) if n not in self.offline]

    def reconcile(self) -> list[ReconcileReport]:
        reports = []
        for switch in self.switches.values():
            add, delete = difference(switch.dump(), self.desired.get(switch.name, switch.dpid))
            switch.remove(delete)
            switch.apply(add)
            reports.append(ReconcileReport(switch.name, add, delete))
        return reports

    def connected(self) -> dict[int, str]:
        return {s.dpid: n for n, s in self.switches.items() if n not in self.offline}

    def flow_stats(self, dpid: int, cookie: int, mask: int) -> list[FlowCount]:
        return fake_stats.flow_counts(self._connected(dpid), cookie, mask)

    def meter_stats(self, dpid: int) -> dict[int, PacketsBytes]:
        return dict.fromkeys(self._connected(dpid).meters, (0, 0))  # a fake meter drops nothing

    def packet_out(self, dpid: int, actions: tuple[Action, ...], frames: list[bytes]) -> None:
        switch = self._connected(dpid)
        assert self.network is not None, "packet-outs need a fake network"
        fake_stats.send_frames(self.network, switch.name, actions, frames)

    def _connected(self, dpid: int) -> FakeSwitch:
        name = self.connected().get(dpid)
        if name is None:
            raise NotConnectedError(f"dpid:{dpid:016x}", "not connected to the controller")
        found = self._reach(name)
        assert found is not None
        return found


@pytest.fixture
def backend() -> FakeBackend:
    return FakeBackend({s: p.dpid for s, p in two_path_scenario().ports.switches.items()})


@pytest.fixture
def client(backend: FakeBackend, tmp_path: Path) -> Iterator[ControllerDriver]:
    address = f"unix:{tmp_path}/api.sock"
    server = make_server(backend, address)
    server.start()
    with ControllerDriver(address) as driver:
        yield driver
    server.stop()


def test_the_client_meets_the_protocol(client: ControllerDriver) -> None:
    assert isinstance(client, SouthboundDriver)


def test_rule_sets_travel_to_the_switches_and_back(client: ControllerDriver) -> None:
    scenario = two_path_scenario(standby=True)
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    run(client, install_steps(plan))
    assert {s: r for s, r in client.dump().items() if not r.empty} == {
        r.switch: r for r in plan.rule_sets()
    }
    run(client, removal_steps(plan))
    assert all(r.empty for r in client.dump().values())
    assert client.switches() == {1: "s1", 2: "s2", 3: "s3", 4: "s4"}


def test_an_offline_switch_gets_its_rules_when_reconciled(
    client: ControllerDriver, backend: FakeBackend
) -> None:
    scenario = two_path_scenario()
    plan = compile_reservation(scenario.request, scenario.topology, scenario.ports)
    backend.offline.add("s2")
    s2 = next(r for r in plan.rule_sets() if r.switch == "s2")
    with pytest.raises(SwitchNotConnectedError, match="switch s2: not connected"):
        client.apply(s2)
    backend.offline.clear()
    reports = client.reconcile()
    assert reports["s2"].added == s2
    assert client.dump()["s2"] == s2


def test_switch_errors_and_bad_input_come_back_as_such(
    client: ControllerDriver, backend: FakeBackend
) -> None:
    backend.broken.add("s1")
    with pytest.raises(SouthboundError, match="controller answered 502: switch s1: switch refused"):
        client.apply(RuleSet("s1", 1))
    response = client._client.post("/v1/apply", json={"switch": "", "dpid": 1})
    assert response.status_code == 400
    assert "rule_set.switch" in response.json()["error"]
    assert client._client.get("/v1/nothing").status_code == 404


# httpcore leaves the socket of a failed Unix-socket connect for the garbage collector.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_unreachable_controller_is_a_southbound_error(tmp_path: Path) -> None:
    with (
        ControllerDriver(f"unix:{tmp_path}/none.sock") as driver,
        pytest.raises(SouthboundError, match="unreachable"),
    ):
        driver.dump()


def test_bad_rule_sets_are_input_errors(client: ControllerDriver) -> None:
    with pytest.raises(InputError):
        client._check(client._client.post("/v1/apply", content=b"{"), "s1")


def test_a_port_already_taken_is_a_clear_error(backend: FakeBackend) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = make_server(backend, f"127.0.0.1:{port}")
        with pytest.raises(OSError, match=f"could not listen on 127.0.0.1:{port}"):
            server.start()

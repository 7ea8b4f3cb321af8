"""`braid serve --southbound`: reservations booked over REST program real Open vSwitch bridges.

A real `braid serve` process, its SQLite store, and a private Open vSwitch:
rules appear a lead time before a reservation starts and go at its end or
on cancel; rules of others on the same bridges are never touched; a serve
killed with -9 comes back and puts the switches right.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from braid.adapters.free_ports import free_port
from braid.adapters.southbound.direct import OfctlDriver, ofctl_runner
from braid.adapters.southbound.ovs_sandbox import OvsSandbox
from braid.adapters.store import open_repository
from braid.adapters.wiring_files import load_wiring, wiring_of_ports
from braid.app.reservations.plan_facts import labels_of
from braid.core.model.topology import Topology, topology_from_dict, topology_to_dict
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.model import BRAID_COOKIE_TAG, RuleRequest, RuleSet, merge_rule_sets
from tests.e2e.waiting import wait_for
from tests.unit.core.rules.scenarios import Scenario, two_path_scenario

pytestmark = pytest.mark.e2e

BRAID = str(Path(sys.executable).with_name("braid"))
SWITCHES = ("s1", "s2", "s3", "s4")
LEAD = 2
FOREIGN = "cookie=0x1234,priority=5,in_port=7,actions=drop"


def _wiring(scenario: Scenario, ovs: OvsSandbox, driver: str) -> dict[str, Any]:
    drivers = {"direct": {"rundir": str(ovs.rundir)}, "controller": {"api": ovs.controller_api}}
    return wiring_of_ports(scenario.ports, drivers=drivers, driver=driver)


class Serve:
    """A `braid serve` process with a southbound wiring file, and a client for it."""

    def __init__(
        self, tmp: Path, ovs: OvsSandbox, scenario: Scenario, driver: str, host: str = "127.0.0.1"
    ) -> None:
        self.tmp, self.port, self.host = tmp, free_port(), host
        self.db = f"sqlite:///{tmp / 'braid.db'}"
        (tmp / "topology.yaml").write_text(yaml.safe_dump(topology_to_dict(scenario.topology)))
        (tmp / "wiring.yaml").write_text(yaml.safe_dump(_wiring(scenario, ovs, driver)))
        self.env = {
            **os.environ,
            "BRAID_PROVISION_LEAD_SECONDS": str(LEAD),
            "BRAID_RECONCILE_SECONDS": "2",
            # The sandbox's bridges have no ports to queue on: the rules only route
            # (tests/e2e/test_enforcement.py holds rates on real ports).
            "BRAID_ENFORCE_RATES": "false",
        }
        made = subprocess.run(
            [BRAID, "token", "create", "--user", "olga", "--role", "operator",
             "--database", self.db],
            capture_output=True, text=True, check=True, env=self.env,
        )  # fmt: skip
        self.headers = {"Authorization": f"Bearer {made.stdout.split()[0]}"}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [BRAID, "serve", "-t", str(self.tmp / "topology.yaml"), "--database", self.db,
             "--host", self.host, "--port", str(self.port),
             "--southbound", str(self.tmp / "wiring.yaml")],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        assert wait_for(lambda: self._healthy()), "braid serve did not come up"

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)

    def call(self, method: str, path: str, body: Any = None) -> httpx.Response:
        url = f"{self.url}{path}"
        return httpx.request(method, url, json=body, headers=self.headers, timeout=10)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def reserve(
        self, start_in: int, seconds: int, src: str = "s1", dst: str = "s3"
    ) -> dict[str, Any]:
        now = int(time.time())
        body = {
            "src": src,
            "dst": dst,
            "bandwidth": "400M",
            "max_paths": 2,
            "start": _iso(now + start_in),
            "end": _iso(now + start_in + seconds),
        }
        answer = self.call("POST", "/v1/reservations", body)
        assert answer.status_code == 201, answer.text
        return dict(answer.json())

    def topology(self) -> Topology:
        return topology_from_dict(yaml.safe_load((self.tmp / "topology.yaml").read_text()))

    def provisioning(self, rid: str) -> str | None:
        found = self.call("GET", f"/v1/reservations/{rid}").json()["provisioning"]
        return None if found is None else str(found["state"])

    def _healthy(self) -> bool:
        try:
            return self.call("GET", "/healthz").status_code == 200
        except httpx.HTTPError:
            return False


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


@pytest.fixture
def scenario() -> Scenario:
    return two_path_scenario()


@pytest.fixture(params=["direct", "controller"])
def serve(
    request: pytest.FixtureRequest, tmp_path: Path, ovs: OvsSandbox, scenario: Scenario
) -> Iterator[Serve]:
    """A serve programming the sandbox's bridges through `ovs-ofctl`, or a braid controller."""
    controller = ovs.start_controller() if request.param == "controller" else None
    for name in SWITCHES:
        target = "tcp:127.0.0.1:6653" if controller is not None else None
        ovs.add_bridge(name, scenario.ports.switch(name).dpid, target)
    ovs.ofctl("add-flow", "s2", FOREIGN)
    made = Serve(tmp_path, ovs, scenario, request.param)
    made.start()
    try:
        yield made
    finally:
        made.stop()
        if controller is not None:
            controller.terminate()
            controller.wait(10)


def _braid_tables(ovs: OvsSandbox) -> dict[str, RuleSet]:
    driver = OfctlDriver({s: s for s in SWITCHES}, ofctl_runner(str(ovs.rundir)))
    return {s: t for s, t in driver.dump().items() if not t.empty}


def _foreign_kept(ovs: OvsSandbox) -> bool:
    return "in_port=7" in ovs.ofctl("dump-flows", "s2")


def test_rules_follow_the_reservation_window_and_cancel(serve: Serve, ovs: OvsSandbox) -> None:
    first = serve.reserve(start_in=LEAD + 4, seconds=6)
    assert all(v["vlan"] for v in first["vlans"])  # assigned at booking
    assert serve.provisioning(first["id"]) == "scheduled"
    assert _braid_tables(ovs) == {}  # not yet: the lead time has not come
    assert wait_for(lambda: serve.provisioning(first["id"]) == "installed")
    installed = _braid_tables(ovs)
    assert {"s1", "s3"} <= set(installed)  # both ingress switches hold its entry rules
    assert wait_for(lambda: serve.provisioning(first["id"]) == "removed")  # its end passed
    assert _braid_tables(ovs) == {}
    second = serve.reserve(start_in=2, seconds=600)
    assert wait_for(lambda: serve.provisioning(second["id"]) == "installed")
    assert serve.call("DELETE", f"/v1/reservations/{second['id']}").status_code == 200
    assert wait_for(lambda: _braid_tables(ovs) == {})
    assert wait_for(lambda: serve.provisioning(second["id"]) == "removed")
    audit = serve.call("GET", f"/v1/reservations/{second['id']}/audit").json()["entries"]
    steps = [e["to"] for e in audit if e["action"] == "provisioning"]
    assert steps[:2] == ["installing", "installed"] and steps[-1] == "removed"
    assert _foreign_kept(ovs)


def test_a_serve_killed_with_minus_9_comes_back_to_exactly_the_desired_state(
    serve: Serve, ovs: OvsSandbox
) -> None:
    first = serve.reserve(start_in=2, seconds=600)
    assert wait_for(lambda: serve.provisioning(first["id"]) == "installed")
    # Two more, due at once: the serve is killed while it is installing them.
    serve.reserve(start_in=2, seconds=600, src="s2", dst="s3")
    serve.reserve(start_in=2, seconds=600, src="s1", dst="s2")
    serve.kill()
    # While it is down: one of its rules is deleted, a stale braid rule appears.
    ovs.ofctl("--strict", "del-flows", "s3", _an_entry_flow(ovs, "s3"))
    stale = f"cookie={BRAID_COOKIE_TAG | 99:#x},priority=2000,in_port=3,actions=drop"
    ovs.ofctl("add-flow", "s4", stale)
    desired = _desired(serve)
    assert len({rs.switch for rs in desired.values()}) >= 3
    assert _braid_tables(ovs) != desired
    serve.start()
    assert wait_for(lambda: _braid_tables(ovs) == desired), json.dumps(
        {s: len(t.flows) for s, t in _braid_tables(ovs).items()}
    )
    assert _foreign_kept(ovs)


def _desired(serve: Serve) -> dict[str, RuleSet]:
    """What the switches should hold: every booked reservation compiled with its labels."""
    repo = open_repository(serve.db)
    try:
        topology = serve.topology()
        config = load_wiring(serve.tmp / "wiring.yaml", topology)
        plans = []
        for r in repo.booked():
            labels = labels_of(r.plan)
            assert labels is not None
            hosts = (config.host_at[r.src], config.host_at[r.dst])
            request = RuleRequest(r.id, r.allocations, *hosts)
            plans.append(compile_reservation(request, topology, config.ports, labels))
    finally:
        repo.close()
    return {s: t for s, t in merge_rule_sets(rs for p in plans for rs in p.rule_sets()).items()}


def _an_entry_flow(ovs: OvsSandbox, switch: str) -> str:
    """The match of one of braid's entry rules (priority 3000) on `switch`, for del-flows."""
    for line in ovs.ofctl("--no-stats", "dump-flows", switch).splitlines():
        if "priority=3000" in line:
            match = line.strip().split(" actions=")[0]
            return ",".join(p for p in match.split(",") if not p.startswith("cookie="))
    raise AssertionError(f"no entry rule on {switch}")

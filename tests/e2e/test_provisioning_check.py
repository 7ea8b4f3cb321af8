"""`braid serve --southbound` checks each reservation's circuit once it is installed.

A real serve process with the direct driver, with a `braid controller`
the bridges connect to, or with both (the sender's side direct, the
receiver's behind the controller), on veth-linked bridges of a private
Open vSwitch (`veth_network`): the REST answer's provisioning says
`verified` for a healthy circuit, and names the link that lost the probes
when the links into the destination's switch are down.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from braid.adapters.southbound.ovs_sandbox import OvsSandbox
from tests.e2e.test_provisioning import Serve
from tests.e2e.veth_network import ip, wire
from tests.e2e.waiting import wait_for
from tests.unit.core.rules.scenarios import two_path_scenario

pytestmark = pytest.mark.e2e


CONTROLLED_WHEN_MIXED = ("s3", "s4")  # h2's switch and one path's middle


@pytest.fixture(params=["direct", "controller", "mixed"])
def serve(request: pytest.FixtureRequest, tmp_path: Path, ovs: OvsSandbox) -> Iterator[Serve]:
    scenario = two_path_scenario()
    if request.param == "direct":
        wire(ovs, scenario)
    else:
        request.getfixturevalue("controller")
        wire(ovs, scenario, "tcp:127.0.0.1:6653")
    made = Serve(tmp_path, ovs, scenario, "direct" if request.param == "mixed" else request.param)
    if request.param == "mixed":
        for switch in set(scenario.ports.switches) - set(CONTROLLED_WHEN_MIXED):
            ovs.vsctl("del-controller", switch)
        _drive_by_controller(made.tmp / "wiring.yaml", CONTROLLED_WHEN_MIXED)
    made.start()
    try:
        yield made
    finally:
        made.stop()


def _drive_by_controller(wiring: Path, switches: tuple[str, ...]) -> None:
    data = yaml.safe_load(wiring.read_text())
    for entry in data["switches"]:
        if entry["node"] in switches:
            entry["driver"] = "controller"
    wiring.write_text(yaml.safe_dump(data))


def _provisioning(serve: Serve, rid: str) -> dict[str, Any]:
    found = serve.call("GET", f"/v1/reservations/{rid}").json()["provisioning"]
    return dict(found or {})


def _checked(serve: Serve, rid: str) -> dict[str, Any]:
    assert wait_for(lambda: _provisioning(serve, rid).get("check") is not None)
    found = _provisioning(serve, rid)
    print(found)
    return found


def test_a_reservation_is_verified_then_a_dead_link_is_named(serve: Serve, ovs: OvsSandbox) -> None:
    healthy = serve.reserve(start_in=2, seconds=600)
    found = _checked(serve, healthy["id"])
    assert found["state"] == "installed" and found["verified"] is True, found
    assert serve.call("DELETE", f"/v1/reservations/{healthy['id']}").status_code == 200
    assert wait_for(lambda: _provisioning(serve, healthy["id"]).get("state") == "removed")
    for link in ("l13", "l23", "l43"):  # every way into s3, where h2 hangs
        ip(ovs, "link", "set", f"{link}-s3", "down")
    broken = serve.reserve(start_in=2, seconds=600)
    found = _checked(serve, broken["id"])
    assert found["state"] == "installed" and found["verified"] is False, found
    assert " and s3 (link l" in found["check"], found

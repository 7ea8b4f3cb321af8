"""`braid controller`'s port-status reporter against the real service over REST.

A link of the example network goes down in braid's fake network; the port
events its switches would send go through the reporter, which posts the
link's state with a monitor token through the same client a monitor's
`service` action uses, and the protected reservation moves to its standby
and back.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
from fastapi.testclient import TestClient

from braid.adapters.failover.service_action import LinkStateClient
from braid.adapters.southbound.port_reporter import PortReporter, port_links
from braid.app.auth import create_token
from braid.bootstrap.serve import initial_topology
from braid.core.failover.ports import PortEvent
from braid.core.model.topology import topology_from_dict
from braid.testing.fake_network import FakeNetwork
from tests.api.harness import EXAMPLE, NOW, Api
from tests.api.test_link_state import protected
from tests.unit.core.rules.scenarios import port_map


def _reporter(api: Api, ports: Any) -> PortReporter:
    token = create_token(api.repo, "ctl", "monitor", NOW)
    client = TestClient(api.app, headers={"Authorization": f"Bearer {token}"})
    return PortReporter(port_links(ports), LinkStateClient(client))


def _events(network: FakeNetwork, up: bool, before: dict[str, set[int]]) -> list[PortEvent]:
    """Port events for every port whose state differs from `before` (what switches send)."""
    events = []
    for name, switch in sorted(network.switches.items()):
        changed = before.get(name, set()) ^ switch.down_ports
        events += [PortEvent(switch.dpid, port, up) for port in sorted(changed)]
    return events


def _reservation(api: Api, rid: str) -> dict[str, Any]:
    found: dict[str, Any] = api.client.get(
        f"/v1/reservations/{rid}", headers=api.auth("alice")
    ).json()
    return found


def test_a_port_down_moves_the_protected_reservation_and_back(api: Api) -> None:
    topology = topology_from_dict(initial_topology(EXAMPLE, None))
    ports = port_map(topology, {"dtn": ("ORNL", "10.0.0.1")})
    network = FakeNetwork(topology, ports)
    r = protected(api)
    primary = r["protection"]["primary"]["links"]
    link = next(k for k in primary if k not in r["protection"]["standby"]["links"])
    reporter = _reporter(api, ports)
    network.set_link(link, up=False)
    for event in _events(network, False, {}):
        reporter.handle(event)
    assert [(p.link, p.state, p.ok, p.moved) for p in reporter.posted] == [(link, "down", True, 1)]
    assert _reservation(api, r["id"])["protection"]["on"] == "standby"
    topology_now = api.client.get("/v1/topology", headers=api.auth("alice")).json()
    assert [k["id"] for k in topology_now["links"] if k.get("state") == "down"] == [link]
    down = {n: set(s.down_ports) for n, s in network.switches.items()}
    network.set_link(link, up=True)
    for event in _events(network, True, down):
        reporter.handle(event)
    assert [(p.link, p.state) for p in reporter.posted] == [(link, "down"), (link, "up")]
    assert _reservation(api, r["id"])["protection"]["on"] == "primary"  # failback (default)


def test_a_post_the_service_refuses_stays_pending_until_it_is_taken(api: Api) -> None:
    topology = topology_from_dict(initial_topology(EXAMPLE, None))
    ports = port_map(topology, {"dtn": ("ORNL", "10.0.0.1")})
    link = "NERSC-SUNN"
    switch = ports.switch("SUNN")
    before = api.snapshot()
    # A token the service does not know: 401, nothing changes, the state waits.
    stranger = TestClient(api.app, headers={"Authorization": "Bearer not-a-token"})
    reporter = PortReporter(port_links(ports), LinkStateClient(stranger))
    reporter.handle(PortEvent(switch.dpid, switch.link_ports[link], False))
    assert not reporter.posted[0].ok and "401" in (reporter.posted[0].error or "")
    assert set(reporter.pending) == {link}
    assert api.snapshot() == before
    # The service comes to accept it (here: the client gets a good token); the retry posts it.
    token = create_token(api.repo, "ctl", "monitor", NOW)
    stranger.headers["Authorization"] = f"Bearer {token}"
    reporter.flush()
    assert reporter.posted[-1].ok and reporter.pending == {}
    topology_now = api.client.get("/v1/topology", headers=api.auth("alice")).json()
    assert [k["id"] for k in topology_now["links"] if k.get("state") == "down"] == [link]


def test_an_unreachable_service_is_an_answer_not_an_exception() -> None:
    topology = topology_from_dict(initial_topology(EXAMPLE, None))
    ports = port_map(topology, {"dtn": ("ORNL", "10.0.0.1")})
    switch = ports.switch("SUNN")
    nowhere = LinkStateClient(httpx.Client(base_url="http://127.0.0.1:9", timeout=0.5))
    reporter = PortReporter(port_links(ports), nowhere)
    reporter.handle(PortEvent(switch.dpid, switch.link_ports["NERSC-SUNN"], False))
    assert "braid serve:" in (reporter.posted[0].error or "")
    assert set(reporter.pending) == {"NERSC-SUNN"}
    reporter.close()


def test_events_queued_from_another_thread_are_posted_in_order(api: Api) -> None:
    topology = topology_from_dict(initial_topology(EXAMPLE, None))
    ports = port_map(topology, {"dtn": ("ORNL", "10.0.0.1")})
    switch = ports.switch("SUNN")
    port = switch.link_ports["NERSC-SUNN"]
    reporter = _reporter(api, ports)
    reporter.start()
    try:
        for up in (False, True, False):
            reporter.port_status(switch.dpid, port, up)  # returns at once, as os-ken needs
        deadline = time.monotonic() + 30
        while len(reporter.posted) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        reporter.close()
    assert [(p.state, p.ok) for p in reporter.posted] == [
        ("down", True),
        ("up", True),
        ("down", True),
    ]

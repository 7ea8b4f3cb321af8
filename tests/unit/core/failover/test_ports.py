"""Port-status events to link states, on braid's fake network's wiring."""

from __future__ import annotations

import pytest

from braid.core.errors import InputError
from braid.core.failover.ports import LinkChange, LinkEnd, PortEvent, PortLinks, port_changed
from braid.core.rules.model import PortMap
from braid.testing.fake_network import FakeNetwork
from tests.unit.core.rules.scenarios import two_path_scenario


def _links(ports: PortMap) -> PortLinks:
    return PortLinks.of({name: (s.dpid, s.link_ports) for name, s in ports.switches.items()})


def _events(network: FakeNetwork, up: bool, ports: dict[str, set[int]]) -> list[PortEvent]:
    """What the fake switches would report for these ports, switch by switch."""
    return [
        PortEvent(network.switches[name].dpid, port, up)
        for name, numbers in sorted(ports.items())
        for port in sorted(numbers)
    ]


def _down_ports(network: FakeNetwork) -> dict[str, set[int]]:
    return {n: set(s.down_ports) for n, s in network.switches.items() if s.down_ports}


def _fold(links: PortLinks, events: list[PortEvent]) -> tuple[PortLinks, list[LinkChange]]:
    changes = []
    for event in events:
        links, change = port_changed(links, event)
        if change is not None:
            changes.append(change)
    return links, changes


def test_a_link_goes_down_with_its_first_end_and_up_with_its_last() -> None:
    scenario = two_path_scenario()
    network = FakeNetwork(scenario.topology, scenario.ports)
    links = _links(scenario.ports)
    network.set_link("l12", up=False)
    ports = _down_ports(network)
    assert ports == {"s1": {scenario.ports.link_port("s1", "l12")},
                     "s2": {scenario.ports.link_port("s2", "l12")}}  # fmt: skip
    links, changes = _fold(links, _events(network, False, ports))
    assert changes == [LinkChange("l12", "down", "s1", scenario.ports.link_port("s1", "l12"))]
    assert links.down == {LinkEnd("s1", "l12"), LinkEnd("s2", "l12")}
    # one end back: the link is still down at the other
    network.set_link("l12", up=True)
    links, changes = _fold(links, _events(network, True, {"s2": ports["s2"]}))
    assert changes == [] and links.is_down("l12")
    links, changes = _fold(links, _events(network, True, {"s1": ports["s1"]}))
    assert changes == [LinkChange("l12", "up", "s1", scenario.ports.link_port("s1", "l12"))]
    assert links.down == frozenset()


def test_repeats_other_links_and_unwired_ports_change_nothing_more() -> None:
    scenario = two_path_scenario()
    links = _links(scenario.ports)
    s1 = scenario.ports.switch("s1")
    host_port = scenario.ports.host("h1").port
    links, first = port_changed(links, PortEvent(s1.dpid, s1.link_ports["l14"], False))
    assert first is not None and (first.link, first.state) == ("l14", "down")
    again, repeat = port_changed(links, PortEvent(s1.dpid, s1.link_ports["l14"], False))
    assert repeat is None and again.down == links.down
    for event in (PortEvent(s1.dpid, host_port, False), PortEvent(999, 1, False)):
        after, change = port_changed(links, event)
        assert change is None and after == links
    up_unknown, change = port_changed(links, PortEvent(s1.dpid, s1.link_ports["l12"], True))
    assert change is None and up_unknown.down == links.down  # l12 was never down


def test_two_links_on_one_port_are_refused_naming_the_field() -> None:
    with pytest.raises(InputError) as caught:
        PortLinks.of({"s1": (1, {"l12": 3, "l13": 3})})
    assert caught.value.field == "switches.s1.ports.l13"


def test_a_port_that_reports_liveness_is_down_when_not_live() -> None:
    # Open vSwitch with BFD on the port: the port stays up, its liveness follows the session.
    scenario = two_path_scenario()
    s1 = scenario.ports.switch("s1")
    port = s1.link_ports["l13"]
    links = _links(scenario.ports)
    # added, not yet live (BFD coming up): nothing is known to be wrong
    links, change = port_changed(links, PortEvent(s1.dpid, port, True, live=False))
    assert change is None
    links, change = port_changed(links, PortEvent(s1.dpid, port, True, live=True))
    assert change is None
    links, change = port_changed(links, PortEvent(s1.dpid, port, True, live=False))
    assert change == LinkChange("l13", "down", "s1", port)
    links, change = port_changed(links, PortEvent(s1.dpid, port, True, live=True))
    assert change == LinkChange("l13", "up", "s1", port)


def test_a_switch_that_never_reports_liveness_is_read_by_its_port_state() -> None:
    scenario = two_path_scenario()
    s1 = scenario.ports.switch("s1")
    port = s1.link_ports["l13"]
    links = _links(scenario.ports)
    for live in (False, None):
        after, change = port_changed(links, PortEvent(s1.dpid, port, True, live=live))
        assert change is None and not after.is_down("l13")
    after, change = port_changed(links, PortEvent(s1.dpid, port, False, live=False))
    assert change == LinkChange("l13", "down", "s1", port)

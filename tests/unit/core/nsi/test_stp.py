"""STPs name braid's nodes as ports; VLANs must be ones the port's links carry."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.core.model.topology import topology_from_dict
from braid.core.nsi.errors import (
    PAYLOAD_ERROR,
    STP_UNAVAILABLE,
    TOPOLOGY_ERROR,
    UNKNOWN_STP,
    NsiError,
)
from braid.core.nsi.stp import Stp, choose_vlan, edge_ports, format_stp, resolve_stp

TOPOLOGY = topology_from_dict(
    {
        "nodes": [{"id": "A"}, {"id": "B"}, {"id": "C"}],
        "links": [
            {"id": "A-B", "a": "A", "b": "B", "capacity": "1G", "vlans": "1780-1789"},
            {"id": "B-C", "a": "B", "b": "C", "capacity": "1G", "vlans": "2000-2009"},
        ],
    }
)
PORTS = edge_ports(TOPOLOGY)


def test_a_port_carries_the_union_of_its_links_vlans() -> None:
    assert PORTS == {"A": ((1780, 1789),), "B": ((1780, 1789), (2000, 2009)), "C": ((2000, 2009),)}


def test_an_stp_of_braid_resolves_to_its_port_and_vlan() -> None:
    stp = resolve_stp("urn:ogf:network:braid.test:topology:A?vlan=1781", "braid.test", PORTS, "s")
    assert stp == Stp("A", ((1781, 1781),))
    assert format_stp("braid.test", "A", 1781) == "urn:ogf:network:braid.test:topology:A?vlan=1781"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("urn:ogf:network:other.net:topology:A?vlan=1781", UNKNOWN_STP),
        ("urn:ogf:network:braid.test:topology:Z?vlan=1781", UNKNOWN_STP),
        ("urn:ogf:network:braid.test:topology:A?vlan=1800", TOPOLOGY_ERROR),
        ("urn:ogf:network:braid.test:topology:A?vlan=5000", TOPOLOGY_ERROR),
        ("urn:ogf:network:braid.test:topology:A", PAYLOAD_ERROR),
    ],
)
def test_a_bad_stp_is_refused_with_its_nsi_code_and_field(text: str, code: str) -> None:
    with pytest.raises(NsiError) as raised:
        resolve_stp(text, "braid.test", PORTS, "sourceSTP")
    assert raised.value.code == code
    assert raised.value.field == "sourceSTP"


@given(st.sets(st.integers(1780, 1789)))
def test_the_chosen_vlan_is_asked_for_carried_and_free(taken: set[int]) -> None:
    stp = Stp("A", ((1780, 1789),))
    if taken == set(range(1780, 1790)):
        with pytest.raises(NsiError) as raised:
            choose_vlan(stp, PORTS["A"], taken, "sourceSTP")
        assert raised.value.code == STP_UNAVAILABLE
        return
    vlan = choose_vlan(stp, PORTS["A"], taken, "sourceSTP")
    assert vlan not in taken and 1780 <= vlan <= 1789
    assert all(v in taken for v in range(1780, vlan))

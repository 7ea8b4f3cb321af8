"""Wiring files: a skeleton that reads back, and errors that name the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from braid.adapters.topology_files import load_topology
from braid.adapters.wiring_files import (
    load_wiring,
    wiring_from_dict,
    wiring_of_ports,
    wiring_skeleton,
)
from braid.core.errors import InputError

EXAMPLE = Path(__file__).resolve().parents[3] / "src" / "braid" / "examples" / "science-net.yaml"
TOPOLOGY = load_topology(EXAMPLE)


def test_the_skeleton_reads_back_with_a_host_and_every_link_port_per_node() -> None:
    config = wiring_from_dict(wiring_skeleton(TOPOLOGY), TOPOLOGY)
    assert set(config.ports.switches) == set(TOPOLOGY.nodes) == set(config.host_at)
    for link in TOPOLOGY.links.values():
        for end in (link.a, link.b):
            assert config.ports.link_port(end, link.id) >= 1
    assert all(access.driver == "direct" and access.bridge for access in config.access.values())
    controlled = wiring_from_dict(wiring_skeleton(TOPOLOGY, "controller"), TOPOLOGY)
    assert controlled.controller_api == "127.0.0.1:7300"


def test_the_wiring_of_known_ports_reads_back_as_the_same_ports() -> None:
    config = wiring_from_dict(wiring_skeleton(TOPOLOGY), TOPOLOGY)
    bridges = {node: f"br-{node.lower()}" for node in TOPOLOGY.nodes}
    drivers = {"direct": {"rundir": "run"}}
    again = wiring_from_dict(
        wiring_of_ports(config.ports, drivers=drivers, bridges=bridges), TOPOLOGY
    )
    assert again.ports == config.ports and again.host_at == config.host_at
    assert {n: a.bridge for n, a in again.access.items()} == bridges
    assert again.rundir == "run"


def _broken(change: dict[str, Any]) -> dict[str, Any]:
    data = wiring_skeleton(TOPOLOGY)
    data["switches"][0] = {**data["switches"][0], **change}
    return data


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"node": "NOWHERE"}, "switches[0].node"),
        ({"dpid": -1}, "switches[0].dpid"),
        ({"driver": "telnet"}, "switches[0].driver"),
        ({"driver": "controller"}, "switches[0].driver"),  # no drivers.controller.api
        ({"ports": {"ANL-CHIC": 1}}, "switches[0].ports.ANL-CHIC"),  # not a link of ORNL
    ],
)
def test_a_bad_switch_entry_is_an_error_naming_the_field(
    change: dict[str, Any], field: str
) -> None:
    with pytest.raises(InputError) as caught:
        wiring_from_dict(_broken(change), TOPOLOGY)
    assert caught.value.field == field


def test_a_file_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "wiring.yaml"
    path.write_text("switches: []\nhosts: []\n")
    with pytest.raises(InputError) as caught:
        load_wiring(path, TOPOLOGY)
    assert caught.value.field == f"{path}: switches"


def test_the_controller_driver_may_name_a_token_file() -> None:
    data = wiring_skeleton(TOPOLOGY, "controller")
    data["drivers"]["controller"]["token_file"] = "/etc/braid/controller.token"
    config = wiring_from_dict(data, TOPOLOGY)
    assert config.controller_token_file == "/etc/braid/controller.token"
    assert (
        wiring_from_dict(wiring_skeleton(TOPOLOGY, "controller"), TOPOLOGY).controller_token_file
        is None
    )
    data["drivers"]["controller"]["token"] = "a secret in the file itself"
    with pytest.raises(InputError, match=r"drivers\.controller\.token: unknown key"):
        wiring_from_dict(data, TOPOLOGY)


def test_the_direct_driver_may_name_the_namespace_of_its_bridges_ports() -> None:
    data = wiring_skeleton(TOPOLOGY)
    assert wiring_from_dict(data, TOPOLOGY).netns is None
    data["drivers"] = {"direct": {"rundir": "run", "netns": "switches"}}
    assert wiring_from_dict(data, TOPOLOGY).netns == "switches"
    data["drivers"]["direct"]["netns"] = ""
    with pytest.raises(InputError, match=r"drivers\.direct\.netns: must be a non-empty"):
        wiring_from_dict(data, TOPOLOGY)
    data["drivers"]["direct"] = {"namespace": "switches"}
    with pytest.raises(InputError, match=r"drivers\.direct\.namespace: unknown key"):
        wiring_from_dict(data, TOPOLOGY)

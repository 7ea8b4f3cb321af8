"""Reading topology files: braid YAML/JSON, Topology Zoo GraphML, ESnet OSCARS JSON."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from braid.adapters.topology_files import TopologyFileError, read_topology_dict

ROOT = Path(__file__).resolve().parents[2]


def shared_data() -> Path:
    """The data sets checked out next to the repository, as `../shared/data`."""
    data = ROOT.parent / "shared" / "data"
    if not data.is_dir():
        pytest.skip(f"shared data sets not found: expected a 'shared/data' folder next to {ROOT}")
    return data


def zoo(name: str) -> Path:
    path = shared_data() / "topology-zoo" / f"{name}.graphml"
    if not path.is_file():
        pytest.skip(f"Topology Zoo file {path.name} not found in {path.parent}")
    return path


def oscars_file() -> Path:
    path = shared_data() / "esnet-oscars" / "topology.json"
    if not path.is_file():
        pytest.skip(f"OSCARS topology not found at {path}")
    return path


def plain_counts(path: Path) -> tuple[int, int]:
    """Nodes and non-self-loop edges, counted without the code under test."""
    ns = "{http://graphml.graphdrawing.org/xmlns}"
    graph = ET.parse(path).getroot().find(f"{ns}graph")
    assert graph is not None
    edges = [e for e in graph.findall(f"{ns}edge") if e.get("source") != e.get("target")]
    return len(graph.findall(f"{ns}node")), len(edges)


def pair_counts(data: dict[str, Any]) -> Counter[frozenset[str]]:
    return Counter(frozenset((link["a"], link["b"])) for link in data["links"])


# --- Topology Zoo ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "nodes", "links"),
    [
        ("Abilene", 11, 14),
        ("Kdl", 754, 899),
        ("Cogentco", 197, 245),
        ("Esnet", 68, 92),
        ("Geant2012", 40, 61),
    ],
)
def test_zoo_files_parse_with_expected_counts(name: str, nodes: int, links: int) -> None:
    path = zoo(name)
    data = read_topology_dict(path)
    assert (len(data["nodes"]), len(data["links"])) == (nodes, links) == plain_counts(path)
    assert len({link["id"] for link in data["links"]}) == links
    node_ids = {node["id"] for node in data["nodes"]}
    assert all(link["a"] in node_ids and link["b"] in node_ids for link in data["links"])
    assert all(isinstance(note, str) for note in data["notes"])


def test_zoo_node_names_and_coordinates() -> None:
    data = read_topology_dict(zoo("Abilene"))
    assert data["name"] == "Abilene"
    new_york = next(node for node in data["nodes"] if node["id"] == "0")
    assert new_york == {"id": "0", "name": "New York", "lat": 40.71427, "lon": -74.00597}


def test_zoo_nodes_without_coordinates_omit_them() -> None:
    data = read_topology_dict(zoo("Esnet"))
    missing = [node for node in data["nodes"] if "lat" not in node]
    assert len(missing) == 51
    assert all("lon" not in node for node in missing)
    assert any("51 of 68 nodes have no coordinates" in note for note in data["notes"])


def test_zoo_parallel_edges_are_kept_as_separate_links() -> None:
    data = read_topology_dict(zoo("Ntt"))
    assert len(data["links"]) == 216
    pairs = pair_counts(data)
    assert pairs[frozenset(("30", "31"))] == 14
    ids = [link["id"] for link in data["links"] if {link["a"], link["b"]} == {"0", "1"}]
    assert ids == ["0-1", "0-1-2", "0-1-3", "0-1-4"]


def test_zoo_parallel_edges_in_esnet() -> None:
    pairs = pair_counts(read_topology_dict(zoo("Esnet")))
    assert pairs[frozenset(("6", "18"))] == 3
    assert sum(count - 1 for count in pairs.values()) == 13


def test_zoo_link_speed_raw_is_the_capacity() -> None:
    data = read_topology_dict(zoo("Geant2012"))
    with_speed = [link for link in data["links"] if "capacity" in link]
    assert len(with_speed) == 39
    by_id = {link["id"]: link for link in data["links"]}
    assert by_id["0-34"]["capacity"] == "2500000000bps"
    assert "capacity" not in by_id["0-1"]
    assert any("22 of 61 links have no LinkSpeedRaw or LinkSpeed" in note for note in data["notes"])
    esnet = {link["id"]: link for link in read_topology_dict(zoo("Esnet"))["links"]}
    assert esnet["0-11"]["capacity"] == "10000000000bps"


def test_zoo_link_speed_with_units_when_raw_is_missing() -> None:
    data = read_topology_dict(zoo("Garr"))
    by_id = {link["id"]: link for link in data["links"]}
    assert by_id["0-20"]["capacity"] == "100000000bps"
    assert sum("capacity" in link for link in data["links"]) == 55
    assert any("19 of 74 links have no LinkSpeedRaw or LinkSpeed" in n for n in data["notes"])


def test_zoo_self_loops_are_skipped_and_noted() -> None:
    path = zoo("Interoute")
    data = read_topology_dict(path)
    assert len(data["links"]) == 156 == plain_counts(path)[1]
    assert all(link["a"] != link["b"] for link in data["links"])
    loops = [note for note in data["notes"] if "self-loop" in note]
    assert loops == [
        "line 1210: skipped self-loop on node '17'",
        "line 1582: skipped self-loop on node '73'",
    ]


# --- OSCARS -------------------------------------------------------------------------------


def test_oscars_file_parses() -> None:
    data = read_topology_dict(oscars_file())
    assert len(data["nodes"]) == 80
    # 253 adjacencies, one of them to a port no device has.
    assert len(data["links"]) == 252
    assert len({link["id"] for link in data["links"]}) == 252
    assert sum("skipped adjacency" in note for note in data["notes"]) == 1
    assert all(link["a"] != link["b"] for link in data["links"])
    ports = [link["oscars"][end] for link in data["links"] for end in ("a_port", "b_port")]
    assert len(set(ports)) == len(ports)
    assert all(link["capacity"].endswith("bps") for link in data["links"])


def test_oscars_link_details() -> None:
    data = read_topology_dict(oscars_file())
    nodes = {node["id"]: node for node in data["nodes"]}
    assert nodes["albq-cr6"] == {"id": "albq-cr6", "name": "ALBQ"}
    link = next(link for link in data["links"] if link["oscars"]["a_port"] == "bost-cr6:1/1/c31/1")
    assert link["a"] == "bost-cr6"
    assert link["b"] == "newy325hudson-cr6"
    assert link["oscars"]["b_port"] == "newy325hudson-cr6:2/1/c22/1"
    assert link["oscars"]["vlans"] == "2-5,7-4095"
    assert link["oscars"]["metrics"] == {"MPLS": 750}
    assert "latency_ms" not in link
    assert link["capacity"] == f"{400_000 * 1_000_000}bps"


def _port(urn: str, mbps: int, vlans: list[tuple[int, int]]) -> dict[str, Any]:
    return {
        "urn": urn,
        "reservableIngressBw": mbps,
        "reservableEgressBw": mbps,
        "reservableVlans": [{"floor": lo, "ceiling": hi} for lo, hi in vlans],
    }


def _adjacency(a: str, z: str) -> dict[str, Any]:
    return {
        "a": {"device": a.split(":")[0], "port": a},
        "z": {"device": z.split(":")[0], "port": z},
        "metrics": {"MPLS": 10},
    }


def test_oscars_pairs_reverse_adjacencies_and_notes_the_rest(tmp_path: Path) -> None:
    doc = {
        "devices": [
            {"urn": "r1", "ports": [_port("r1:1", 10_000, [(2, 100)]), _port("r1:2", 100, [])]},
            {"urn": "r2", "ports": [_port("r2:1", 40_000, [(50, 60), (10, 20)])]},
        ],
        "adjcies": [
            _adjacency("r1:1", "r2:1"),
            _adjacency("r2:1", "r1:1"),
            _adjacency("r1:1", "r1:2"),
            _adjacency("r1:2", "r9:1"),
            _adjacency("r1:2", "r2:1"),
        ],
    }
    path = tmp_path / "oscars.json"
    path.write_text(json.dumps(doc))
    data = read_topology_dict(path)
    assert [link["id"] for link in data["links"]] == ["r1-r2", "r1-r2-2"]
    first = data["links"][0]
    assert first["capacity"] == "10000000000bps"
    assert first["oscars"]["vlans"] == "10-20,50-60"
    assert data["links"][1]["oscars"]["vlans"] == ""
    notes = "\n".join(data["notes"])
    assert "adjcies[2]" in notes and "same device" in notes
    assert "adjcies[3]" in notes and "r9:1" in notes
    assert "1 of 2 links come from a single adjacency" in notes


def test_oscars_structure_errors_name_the_json_path(tmp_path: Path) -> None:
    path = tmp_path / "bad-oscars.json"
    path.write_text(json.dumps({"devices": [{"urn": "r1", "ports": [{}]}], "adjcies": []}))
    with pytest.raises(TopologyFileError, match=r"bad-oscars\.json.*devices\[0\]\.ports\[0\]\.urn"):
        read_topology_dict(path)


# --- braid's own format and errors --------------------------------------------------------

SMALL = {
    "nodes": [
        {"id": "CHI", "name": "Chicago", "domain": "esnet", "lat": 41.88, "lon": -87.63},
        {"id": "NYC", "name": "New York", "domain": "esnet", "lat": 40.71, "lon": -74.01},
    ],
    "links": [{"id": "CHI-NYC-1", "a": "CHI", "b": "NYC", "capacity": "100G", "latency_ms": 9.1}],
    "domains": [{"id": "esnet", "kind": "wan", "visible": True, "agent": "127.0.0.1:7101"}],
}


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".YAML"])
def test_yaml_round_trip(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"small{suffix}"
    path.write_text(yaml.safe_dump(SMALL, sort_keys=False))
    assert read_topology_dict(path) == SMALL


def test_braid_json_is_returned_as_is(tmp_path: Path) -> None:
    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL))
    assert read_topology_dict(path) == SMALL


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TopologyFileError, match=r"nowhere\.yaml: file not found"):
        read_topology_dict(tmp_path / "nowhere.yaml")


def test_unknown_extension_lists_supported_ones(tmp_path: Path) -> None:
    path = tmp_path / "topology.txt"
    path.write_text("nodes: []\n")
    with pytest.raises(
        TopologyFileError, match=r"topology\.txt.*'\.txt'.*\.yaml.*\.json.*\.graphml"
    ):
        read_topology_dict(path)


def test_broken_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("nodes:\n  - {id: A}\n  - {id: B\nlinks: []\n")
    with pytest.raises(TopologyFileError, match=r"broken\.yaml, line \d+: malformed YAML") as info:
        read_topology_dict(path)
    assert info.value.line in (3, 4)
    assert info.value.path == path


def test_broken_yaml_indentation_line(tmp_path: Path) -> None:
    path = tmp_path / "indent.yml"
    path.write_text("nodes:\n  - id: A\n links: []\n")
    with pytest.raises(TopologyFileError, match=r"indent\.yml, line 3: malformed YAML"):
        read_topology_dict(path)


def test_broken_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "nodes": [],\n  "links": [,]\n}\n')
    with pytest.raises(TopologyFileError, match=r"broken\.json, line 3: malformed JSON"):
        read_topology_dict(path)


@pytest.mark.parametrize(
    ("name", "text", "kind"),
    [
        ("list.json", "[1, 2]", "a list"),
        ("scalar.yaml", "just a string\n", "a str"),
        ("empty.yaml", "", "an empty document"),
    ],
)
def test_top_level_must_be_a_mapping(tmp_path: Path, name: str, text: str, kind: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(
        TopologyFileError, match=rf"{name}: the top level must be a mapping.*{kind}"
    ):
        read_topology_dict(path)


def test_broken_xml_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.graphml"
    path.write_text('<?xml version="1.0"?>\n<graphml>\n  <graph>\n    <node id="a">\n</graphml>\n')
    with pytest.raises(TopologyFileError, match=r"broken\.graphml, line 5: malformed XML") as info:
        read_topology_dict(path)
    assert info.value.line == 5


GRAPHML_HEAD = """<?xml version="1.0" encoding="utf-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key attr.name="label" attr.type="string" for="node" id="d0" />
  <key attr.name="LinkSpeedRaw" attr.type="double" for="edge" id="d1" />
  <graph edgedefault="undirected">
"""


def write_graphml(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "small.graphml"
    path.write_text(GRAPHML_HEAD + body + "  </graph>\n</graphml>\n")
    return path


def test_graphml_edge_to_unknown_node_names_the_line(tmp_path: Path) -> None:
    path = write_graphml(
        tmp_path, '    <node id="a" />\n    <node id="b" />\n    <edge source="a" target="c" />\n'
    )
    with pytest.raises(TopologyFileError, match=r"small\.graphml, line 8: .*unknown node 'c'"):
        read_topology_dict(path)


def test_graphml_undeclared_key_names_the_line(tmp_path: Path) -> None:
    path = write_graphml(
        tmp_path, '    <node id="a">\n      <data key="d9">x</data>\n    </node>\n'
    )
    with pytest.raises(TopologyFileError, match=r"line 7: <data> uses undeclared key 'd9'"):
        read_topology_dict(path)


def test_graphml_small_graph(tmp_path: Path) -> None:
    body = """    <node id="a"><data key="d0">Alpha</data></node>
    <node id="b" />
    <edge source="a" target="b"><data key="d1">1e10</data></edge>
    <edge source="a" target="b"><data key="d1">0.0</data></edge>
    <edge source="b" target="b" />
    <edge source="a" target="b" />
"""
    data = read_topology_dict(write_graphml(tmp_path, body))
    assert data["nodes"] == [{"id": "a", "name": "Alpha"}, {"id": "b"}]
    assert data["links"] == [
        {"id": "a-b", "a": "a", "b": "b", "capacity": "10000000000bps"},
        {"id": "a-b-2", "a": "a", "b": "b"},
        {"id": "a-b-3", "a": "a", "b": "b"},
    ]
    assert "line 10: skipped self-loop on node 'b'" in data["notes"]


def test_graphml_without_namespace(tmp_path: Path) -> None:
    path = tmp_path / "plain.graphml"
    path.write_text(
        '<graphml><graph><node id="x"/><node id="y"/>'
        '<edge source="x" target="y"/></graph></graphml>'
    )
    data = read_topology_dict(path)
    assert data["links"] == [{"id": "x-y", "a": "x", "b": "y"}]


# --- through the core (needs braid.core.model.topology.topology_from_dict) ----------------------


def test_load_small_yaml_through_the_core(tmp_path: Path) -> None:
    from braid.adapters.topology_files import load_topology

    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(SMALL))
    topology = load_topology(path)
    assert topology.links["CHI-NYC-1"].capacity == 100 * 10**9
    assert topology.links["CHI-NYC-1"].latency_ms == 9.1


def test_load_zoo_through_the_core() -> None:
    from braid.adapters.topology_files import load_topology

    topology = load_topology(zoo("Geant2012"), default_capacity_bps=10**9)
    assert len(topology.nodes) == 40
    assert len(topology.links) == 61
    assert topology.links["0-34"].capacity == 2_500_000_000
    assert topology.links["0-1"].capacity == 10**9


def test_load_zoo_without_default_capacity_fails_naming_a_link() -> None:
    from braid.adapters.topology_files import load_topology

    with pytest.raises(ValueError, match="capacity"):
        load_topology(zoo("Abilene"))


def test_load_oscars_through_the_core() -> None:
    from braid.adapters.topology_files import load_topology

    topology = load_topology(oscars_file())
    assert len(topology.nodes) == 80
    assert len(topology.links) == 252
    link = next(iter(topology.links.values()))
    assert link.extra["oscars"]["a_port"].startswith(link.a + ":")

"""The edge's control messages, encoded and decoded without braid-dp (no root needed)."""

from __future__ import annotations

import json
import stat
from dataclasses import fields
from pathlib import Path

import pytest

from braid.adapters.dataplane import (
    ControlError,
    EdgeConfig,
    EdgePath,
    EdgeReservation,
    MultipathEdge,
    MultipathEdgeError,
    ReseqSettings,
    ToHostCounters,
)
from braid.adapters.dataplane.edge_protocol import (
    encode_configure,
    encode_edge_request,
    encode_set_reseq,
    encode_set_weights,
    parse_edge_counters,
)

RESERVATION = EdgeReservation(
    id="r1",
    src="10.0.0.0/24",
    dst="10.0.1.2",
    paths=(EdgePath(vlan=101, weight=0.75), EdgePath(vlan=102, weight=0.25)),
    burst=4,
)


def _line(text: str) -> dict[str, object]:
    assert text.endswith("\n") and text.count("\n") == 1
    decoded = json.loads(text)
    assert isinstance(decoded, dict)
    return decoded


def test_configure_carries_the_whole_config() -> None:
    config = EdgeConfig(reservations=(RESERVATION,), reseq=ReseqSettings(threshold=32, hold_ms=50))
    assert _line(encode_configure(config)) == {
        "cmd": "configure",
        "config": {
            "reservations": [
                {
                    "id": "r1",
                    "src": "10.0.0.0/24",
                    "dst": "10.0.1.2",
                    "paths": [{"vlan": 101, "weight": 0.75}, {"vlan": 102, "weight": 0.25}],
                    "burst": 4,
                    "resequence": True,
                }
            ],
            "reseq": {"threshold": 32, "hold_ms": 50},
        },
    }


def test_weights_knobs_and_plain_requests() -> None:
    assert _line(encode_set_weights("r1", (0.0, 1.0))) == {
        "cmd": "set_weights",
        "reservation": "r1",
        "weights": [0.0, 1.0],
    }
    assert _line(encode_set_reseq(ReseqSettings(buffer_size=64, lrf=20))) == {
        "cmd": "set_reseq",
        "buffer_size": 64,
        "lrf": 20,
    }
    assert _line(encode_edge_request("counters")) == {"cmd": "counters"}
    with pytest.raises(ValueError, match=r"^settings"):
        encode_set_reseq(ReseqSettings())
    with pytest.raises(ValueError, match=r"^weights"):
        encode_set_weights("r1", [])


def test_bad_values_are_refused_before_sending() -> None:
    with pytest.raises(ValueError, match=r"^vlan"):
        EdgePath(vlan=4095)
    with pytest.raises(ValueError, match=r"^weight"):
        EdgePath(vlan=5, weight=-1)
    with pytest.raises(ValueError, match=r"^paths"):
        EdgeReservation(id="r", paths=())
    with pytest.raises(ValueError, match=r"^burst"):
        EdgeReservation(id="r", paths=(EdgePath(vlan=5),), burst=0)


def _to_host(**overrides: int) -> dict[str, int]:
    return {f.name: overrides.get(f.name, 0) for f in fields(ToHostCounters)}


def test_counters_are_decoded_per_path_and_direction() -> None:
    reply: dict[str, object] = {
        "ok": True,
        "counters": {
            "to_net": {
                "paths": {"r1": [{"vlan": 101, "weight": 0.75, "sent": 30}]},
                "passed": 2,
                "received": 32,
                "sent": 32,
                "send_errors": 0,
                "dropped_oversize": 0,
            },
            "to_host": {
                **_to_host(resequenced=7, buffered_packets=1),
                "arrived": [{"vlan": 101, "received": 28}],
            },
        },
    }
    counters = parse_edge_counters(reply)
    assert counters.paths["r1"][0].sent == 30
    assert counters.sent_by_vlan() == {101: 30}
    assert counters.arrived == {101: 28}
    assert counters.to_net["passed"] == 2
    assert (counters.to_host.resequenced, counters.to_host.buffered_packets) == (7, 1)
    broken = {"ok": True, "counters": {"to_net": reply["counters"]["to_net"], "to_host": {}}}  # type: ignore[index]
    with pytest.raises(ControlError, match="to_host"):
        parse_edge_counters(broken)
    with pytest.raises(ControlError, match="no counters"):
        parse_edge_counters({"ok": True})
    arrived_broken = {
        "ok": True,
        "counters": {
            "to_net": reply["counters"]["to_net"],  # type: ignore[index]
            "to_host": {**_to_host(), "arrived": [{"vlan": 101}]},
        },
    }
    with pytest.raises(ControlError, match="arrived"):
        parse_edge_counters(arrived_broken)


def test_the_edge_command_line_and_its_config_file(tmp_path: Path) -> None:
    edge = MultipathEdge("h1", "n1", EdgeConfig(reservations=(RESERVATION,)), namespace="bdqM")
    edge._rundir = tmp_path  # what start() would make
    edge.before_start()
    argv = edge.argv(Path("/bin/braid-dp"))
    assert argv[:5] == ["ip", "netns", "exec", "bdqM", "/bin/braid-dp"]
    assert argv[5:] == [
        "edge",
        "--host",
        "h1",
        "--net",
        "n1",
        "--control",
        str(tmp_path / "control.sock"),
        "--config",
        str(tmp_path / "edge.json"),
    ]
    written = json.loads((tmp_path / "edge.json").read_text())
    assert written["reservations"][0]["paths"][1] == {"vlan": 102, "weight": 0.25}


def test_an_edge_that_exits_is_reported_with_its_message(tmp_path: Path) -> None:
    binary = tmp_path / "braid-dp"
    binary.write_text('#!/bin/sh\necho "--config: reservations[0].id: missing" >&2\nexit 2\n')
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    edge = MultipathEdge("h", "n", EdgeConfig(), binary=binary)
    with pytest.raises(MultipathEdgeError, match="exited with 2: --config"):
        edge.start()
    edge.stop()
    with pytest.raises(MultipathEdgeError, match="not started"):
        edge.counters()

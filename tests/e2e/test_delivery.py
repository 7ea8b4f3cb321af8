"""Delivery measured by a real `braid serve` on real Open vSwitch bridges, driven
directly or through a `braid controller` (which then reads the counters too).

The four bridges of the two-path scenario are joined by veth pairs as the
topology's links, the hosts are internal ports, and frames are injected at
h1's port with `ovs-ofctl packet-out` (through the pipeline, as if h1 had
sent them). The serve installs the reservation, samples its counters every
second, and must count exactly the bytes injected as offered and delivered
(from its first sample on, taken after the circuit check: without the probes);
when every path out of s1 is cut, the sender still offers, nothing arrives,
and the reservation becomes degraded, with one audit entry, as
`braid show ID --delivery` says.
"""

from __future__ import annotations

import json
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from braid.adapters.southbound.ovs_sandbox import OvsSandbox
from tests.e2e.test_provisioning import BRAID, SWITCHES, Serve, _iso
from tests.e2e.waiting import wait_for
from tests.unit.core.rules.scenarios import Scenario, two_path_scenario

pytestmark = pytest.mark.e2e

FRAME_BYTES = 1000
BOOKED = "0.02M"  # 20 kbit/s: the few packet-outs a second offer more than that


def _frame(src: str, dst: str) -> str:
    """An untagged IPv4/UDP frame of FRAME_BYTES, as hex for packet-out."""
    payload = bytes(FRAME_BYTES - 14 - 20 - 8)
    udp = struct.pack("!HHHH", 40000, 5201, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                     bytes(map(int, src.split("."))), bytes(map(int, dst.split("."))))  # fmt: skip
    return (bytes.fromhex("00000000000200000000000108 00".replace(" ", "")) + ip + udp).hex()


class Sender:
    """Injects frames at h1's port in a thread, counting them, until stopped."""

    def __init__(self, ovs: OvsSandbox, scenario: Scenario) -> None:
        h1, h2 = scenario.ports.host("h1"), scenario.ports.host("h2")
        frame = _frame(h1.ipv4, h2.ipv4)
        self.args = ("packet-out", h1.switch, f"in_port={h1.port} packet={frame} actions=table")
        self.ovs, self.sent = ovs, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sender:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.ovs.ofctl(*self.args)
            self.sent += 1


def _wire(ovs: OvsSandbox, scenario: Scenario, controller: str | None) -> None:
    """The bridges, a veth pair per link, an internal port per host.

    Veth pairs, not patch ports: across a patch port Open vSwitch runs both
    bridges' tables in one datapath pass and credits every rule with the frame
    as it entered the first, untagged; over a wire (veth, as Mininet has it,
    or a real link) the egress switch counts the tagged frame it received.
    """
    for name in SWITCHES:
        ovs.add_bridge(name, scenario.ports.switch(name).dpid, controller)
    for link in scenario.topology.links.values():
        ends = (f"{link.a}-{link.id}", f"{link.b}-{link.id}")
        in_ns = ovs.command_in_namespace
        subprocess.run(in_ns(["ip", "link", "add", ends[0], "type", "veth", "peer", "name",
                              ends[1]]), check=True)  # fmt: skip
        for here, end in zip((link.a, link.b), ends, strict=True):
            subprocess.run(in_ns(["ip", "link", "set", end, "up"]), check=True)
            port = scenario.ports.link_port(here, link.id)
            ovs.vsctl("add-port", here, end, "--", "set", "interface", end,
                      f"ofport_request={port}")  # fmt: skip
    for host in scenario.ports.hosts.values():
        name = f"{host.switch}-{host.host}"
        ovs.vsctl("add-port", host.switch, name, "--", "set", "interface", name,
                  "type=internal", f"ofport_request={host.port}")  # fmt: skip


@pytest.fixture
def scenario() -> Scenario:
    return two_path_scenario()


@pytest.fixture(params=["direct", "controller"])
def serve(
    request: pytest.FixtureRequest, tmp_path: Path, ovs: OvsSandbox, scenario: Scenario
) -> Iterator[Serve]:
    controller = None
    if request.param == "controller":
        request.getfixturevalue("controller")
        controller = "tcp:127.0.0.1:6653"
    _wire(ovs, scenario, controller)
    made = Serve(tmp_path, ovs, scenario, request.param)
    made.env["BRAID_DELIVERY_SECONDS"] = "1"
    made.start()
    try:
        yield made
    finally:
        made.stop()


def _delivery(serve: Serve, rid: str) -> dict[str, Any]:
    answer = serve.call("GET", f"/v1/reservations/{rid}/delivery")
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def _show(serve: Serve, rid: str) -> str:
    """What `braid show ID --delivery` prints."""
    token = serve.headers["Authorization"].removeprefix("Bearer ")
    shown = subprocess.run(
        [BRAID, "show", rid, "--delivery", "--url", serve.url, "--token", token],
        capture_output=True, text=True, check=True, env={**serve.env, "COLUMNS": "120"},
    )  # fmt: skip
    return shown.stdout


def _counter(serve: Serve, name: str, rid: str) -> float | None:
    text = serve.call("GET", "/metrics").text
    wanted = f'{name}{{direction="h1->h2",reservation="{rid}"}} '
    for line in text.splitlines():
        if line.startswith(wanted):
            return float(line.removeprefix(wanted))
    return None


def test_the_counted_bytes_are_the_sent_bytes_and_a_cut_degrades(
    serve: Serve, ovs: OvsSandbox, scenario: Scenario
) -> None:
    now = int(time.time())
    body = {"src": "s1", "dst": "s3", "bandwidth": BOOKED,
            "start": _iso(now + 2), "end": _iso(now + 600)}  # fmt: skip
    made = serve.call("POST", "/v1/reservations", body)
    assert made.status_code == 201, made.text
    rid = made.json()["id"]
    assert wait_for(lambda: serve.provisioning(rid) == "installed")
    offered = "braid_delivery_offered_bytes_total"
    # Counted from the first sample on (the baseline, after the circuit check).
    assert wait_for(lambda: _counter(serve, offered, rid) == 0)
    with Sender(ovs, scenario) as sender:
        assert wait_for(lambda: _delivery(serve, rid)["status"] == "ok"), json.dumps(
            _delivery(serve, rid)
        )
    sent = sender.sent * FRAME_BYTES
    assert wait_for(lambda: _counter(serve, offered, rid) == sent), _counter(serve, offered, rid)
    # The circuit check after the install sent its probes down the path to the egress
    # rule too, before the first sample: they are in the baseline, not delivered.
    assert _counter(serve, "braid_delivery_delivered_bytes_total", rid) == sent
    ok = _delivery(serve, rid)["directions"][0]
    assert all(i["dropped"] == 0 for i in ok["intervals"])  # no policing asked
    for link in ("l12", "l14", "l13"):  # every path out of s1
        ovs.vsctl("del-port", "s1", f"s1-{link}")
    with Sender(ovs, scenario):
        assert wait_for(lambda: _delivery(serve, rid)["status"] == "degraded"), _delivery(
            serve, rid
        )
        shown = _show(serve, rid)  # while the sender still offers: degraded, not idle
    assert f"reservation {rid}: delivery degraded" in shown, shown
    assert "h1 → h2: degraded" in shown, shown
    audit = serve.call("GET", f"/v1/reservations/{rid}/audit").json()["entries"]
    noted = [e for e in audit if e["action"] == "delivery"]
    assert len(noted) == 1 and noted[0]["detail"]["direction"] == "h1 -> h2", noted
    assert noted[0]["detail"]["delivered_mbps"] == 0

"""Every emulated link carries the latency its topology declares (braid-dp link; root)."""

from __future__ import annotations

from pathlib import Path

import pytest

from braid.adapters.emulation.network import HostSpec
from braid.adapters.emulation.sweep import sweep
from braid.core.model.booking import Allocation
from braid.emulation.session import EmulationSession, SessionOptions, path_of
from tests.e2e.emulation_fixtures import emulation_host

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
__all__ = ["emulation_host"]

TOPOLOGY = {
    "nodes": [{"id": "A"}, {"id": "X"}, {"id": "B"}],
    "links": [
        {"id": "A-X", "a": "A", "b": "X", "capacity": "20M", "latency_ms": 4},
        {"id": "X-B", "a": "X", "b": "B", "capacity": "20M", "latency_ms": 6},
    ],
}
HOSTS = [HostSpec("h1", "A"), HostSpec("h2", "B")]


def _braid_dp_pids() -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == "braid-dp":
                found.add(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.usefixtures("emulation_host")
def test_declared_latency_is_measured_and_every_emulator_stops() -> None:
    before = _braid_dp_pids()
    with EmulationSession(TOPOLOGY, HOSTS, SessionOptions(mtu=1500, realtime=True)) as session:
        assert set(session.net.emulators) == {"A-X", "X-B"}
        path = path_of(session.topology, ["A", "X", "B"])
        session.install("r1", [Allocation(path, 10_000_000)], "h1", "h2", booked=False)
        assert session.configured_rtt_ms(path) == 20.0
        rtt = session.measure_rtt_ms("h1", "h2")
        assert rtt is not None and 20.0 <= rtt < 30.0  # the delay is a floor; the host is shared
        assert len(_braid_dp_pids() - before) == 2
    assert not _braid_dp_pids() - before
    assert sweep() == []


@pytest.mark.usefixtures("emulation_host")
def test_a_latency_override_applies_to_every_link() -> None:
    options = SessionOptions(mtu=1500, latency_ms=0)
    with EmulationSession(TOPOLOGY, HOSTS, options) as session:
        assert session.net.emulators == {}  # 0 ms: links stay plain veth pairs
        path = path_of(session.topology, ["A", "X", "B"])
        assert session.configured_rtt_ms(path) == 0.0

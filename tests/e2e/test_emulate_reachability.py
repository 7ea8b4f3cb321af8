"""A reservation's hosts reach each other only while it is active (Mininet + OVS, needs root)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from braid.adapters.emulation.iperf import ClientOptions, IperfError, IperfServer, run_client
from braid.adapters.emulation.network import HostSpec
from braid.cli.emulate_cmd import app
from braid.core.planning.lifecycle import State
from braid.emulation.session import EMULATOR, EmulationSession, SessionOptions
from tests.e2e.emulation_fixtures import emulation_host

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
__all__ = ["emulation_host"]

TOPOLOGY = {
    "nodes": [{"id": "A"}, {"id": "X"}, {"id": "B"}],
    "links": [
        {"id": "A-X", "a": "A", "b": "X", "capacity": "20M"},
        {"id": "X-B", "a": "X", "b": "B", "capacity": "20M"},
    ],
}
HOSTS = [HostSpec("h1", "A"), HostSpec("h2", "B"), HostSpec("h3", "A")]


def _reaches(session: EmulationSession, client: str, server: str) -> bool:
    """True when a one-second TCP transfer from `client` to `server` gets data through."""
    iperf = IperfServer(session.net.host(server))
    try:
        options = ClientOptions(seconds=1, omit=0, connect_timeout_ms=1500)
        result = run_client(session.net.host(client), session.net.ip(server), options)
    except IperfError:
        return False
    finally:
        iperf.close()
    return result.received_bps > 0


@pytest.mark.usefixtures("emulation_host")
@pytest.mark.parametrize("driver", ["direct", "controller"])
def test_hosts_reach_each_other_only_while_the_reservation_is_active(driver: str) -> None:
    with EmulationSession(TOPOLOGY, HOSTS, SessionOptions(driver=driver)) as session:
        assert not _reaches(session, "h1", "h2"), "traffic flowed before any reservation"

        installed = session.reserve_and_install("h1", "h2", 10_000_000, 300)
        assert session.service.get(EMULATOR, installed.reservation_id).state == State.ACTIVE
        assert _reaches(session, "h1", "h2")
        assert not _reaches(session, "h3", "h2"), "a host outside the reservation got through"

        session.cancel(installed)
        seen = session.service.get(EMULATOR, installed.reservation_id)
        assert seen.state == State.CANCELLED
        assert not _reaches(session, "h1", "h2"), "traffic flowed after the cancel"
        assert all(rule_set.empty for rule_set in session.live_driver.dump().values())


@pytest.mark.usefixtures("emulation_host")
def test_cleaning_up_never_removes_a_live_emulation() -> None:
    with EmulationSession(TOPOLOGY, HOSTS) as session:
        result = CliRunner().invoke(app, ["clean"])
        assert result.exit_code == 2, "clean ran while an emulation held the lock"
        bridge = session.net.bridges["A"]
        assert session.net.run(["ovs-vsctl", "br-exists", bridge]).returncode == 0

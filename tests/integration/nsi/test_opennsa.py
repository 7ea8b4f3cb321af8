"""braid's NSI provider against a real, unmodified OpenNSA: its requester `onsa` drives
braid, and the same cycle runs against OpenNSA itself.

The peer is `../shared/peers/opennsa/run-opennsa` (from the repository's root;
it sets up its own venv and a PostgreSQL on 127.0.0.1:5432). Without it the
tests skip, except under CI=true, where they fail.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from braid.adapters.free_ports import free_port
from braid.testing.nsi_requests import LAUGHS, XXE, request
from braid.testing.opennsa import (
    BraidNsi,
    NsiTls,
    Onsa,
    OnsaTls,
    PeerMissingError,
    braid_with_nsi,
    opennsa_peer,
    peer_script,
    tls_venv,
    wait_for_log,
)
from tests.certificates import issue_certificate

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
BRAID = Path(sys.executable).parent / "braid"
TOPOLOGY = """\
nodes: [{id: p1}, {id: p2}, {id: p3}]
links:
  - {id: p1-p2, a: p1, b: p2, capacity: 1G, latency_ms: 1, vlans: 1780-1789}
  - {id: p2-p3, a: p2, b: p3, capacity: 1G, latency_ms: 1, vlans: 1780-1789}
"""
START, END = "2030-01-01T10:00:00", "2030-01-01T11:00:00"


def _missing(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason + " (CI=true: failing instead of skipping)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def script() -> Path:
    try:
        return peer_script(ROOT)
    except PeerMissingError as exc:
        _missing(str(exc))
        raise


REQUESTER_NSA = "urn:ogf:network:requester.test:nsa"


@dataclass(frozen=True)
class Pki:
    """braid's HTTPS and onsa's client certificates, one CA; the allow-list names onsa's."""

    folder: Path
    callback: int  # onsa's callback port, registered as its replyTo
    venv: Path  # onsa's venv for TLS (tls_venv)

    def onsa(self, name: str = "onsa-requester") -> OnsaTls:
        f = self.folder
        return OnsaTls(f / f"{name}.pem", f / f"{name}.key", f, self.venv)

    @property
    def tls(self) -> NsiTls:
        f = self.folder
        return NsiTls(f / "braid.pem", f / "braid.key", f / "ca.pem", f / "requesters.yaml")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory, script: Path) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    ca = issue_certificate(folder, "ca", None)
    for name in ("braid", "onsa-requester", "stranger"):
        issue_certificate(folder, name, ca)
    shutil.copy(folder / "ca.pem", folder / "ca.0")  # onsa reads CA certificates named *.0
    try:
        venv = tls_venv(script)
    except PeerMissingError as exc:
        _missing(str(exc))
    pki = Pki(folder, free_port(), venv)
    reply_to = Onsa(Path(), "", "", pki.callback).reply_to
    (folder / "requesters.yaml").write_text(
        "requesters:\n"
        "  - certificate: CN=onsa-requester\n"
        f"    nsa: {{'{REQUESTER_NSA}': {{reply_to: ['{reply_to}']}}}}\n",
        encoding="utf-8",
    )
    return pki


@pytest.fixture(scope="module")
def braid(tmp_path_factory: pytest.TempPathFactory, pki: Pki) -> Iterator[BraidNsi]:
    workdir = tmp_path_factory.mktemp("braid-nsi")
    topology = workdir / "topology.yaml"
    topology.write_text(TOPOLOGY, encoding="utf-8")
    with braid_with_nsi(BRAID, topology, workdir, tls=pki.tls) as served:
        yield served


def _operator_of(braid: BraidNsi) -> dict[str, str]:
    import subprocess

    argv = [str(BRAID), "token", "create", "--user", "olga", "--role", "operator"]
    made = subprocess.run(
        [*argv, "--database", braid.database],
        capture_output=True,
        text=True,
        check=True,
    )
    token = next(w for w in made.stdout.split() if w.startswith("brd_"))
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def operator(braid: BraidNsi) -> dict[str, str]:
    return _operator_of(braid)


@pytest.fixture(scope="module")
def onsa(script: Path, braid: BraidNsi, pki: Pki) -> Onsa:
    return Onsa(script, braid.provider, "braid.test:nsa", pki.callback, tls=pki.onsa())


@pytest.fixture(scope="module")
def peer(script: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Onsa]:
    home = tmp_path_factory.mktemp("opennsa")
    try:
        with opennsa_peer(script, home) as url:
            yield Onsa(script, url, "peer.test:nsa", free_port())
    except PeerMissingError as exc:
        _missing(str(exc))
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _rest(braid: BraidNsi, operator: dict[str, str], path: str) -> httpx.Response:
    return httpx.get(braid.url + path, headers=operator, timeout=10, verify=braid.verify)


def _booked(braid: BraidNsi, operator: dict[str, str]) -> list[dict[str, object]]:
    found = _rest(braid, operator, "/v1/reservations?state=held,reserved,active")
    assert found.status_code == 200, found.text
    reservations: list[dict[str, object]] = found.json()["reservations"]
    return reservations


def _cycle(onsa: Onsa, source: str, dest: str) -> tuple[str, list[tuple[str, ...]]]:
    """reserve, commit, provision, release, terminate, with a query after each step."""
    reserved = onsa.reserve(source, dest, 100, START, END)
    connection = reserved.connection_id
    seen = [onsa.step("query", connection).states]
    for command in ("reservecommit", "provision", "release", "terminate"):
        done = onsa.step(command, connection)
        assert "Error" not in done.output, done.output
        seen.append(onsa.step("query", connection).states)
    return connection, seen


def test_onsa_reserves_commits_provisions_releases_and_terminates_at_braid(
    onsa: Onsa, braid: BraidNsi, operator: dict[str, str]
) -> None:
    reserved = onsa.reserve(
        "braid.test:topology:p1?vlan=1780", "braid.test:topology:p3?vlan=1781", 100, START, END
    )
    cid = reserved.connection_id
    assert "held" in reserved.output
    assert onsa.step("query", cid).states[0] == "ReserveHeld"
    shown = _rest(braid, operator, f"/v1/reservations/{cid}").json()
    assert shown["state"] == "held" and shown["src"] == "p1" and shown["dst"] == "p3"
    assert "committed" in onsa.step("reservecommit", cid).output
    assert onsa.step("query", cid).states == ("ReserveStart", "Released", "Created")
    assert _rest(braid, operator, f"/v1/reservations/{cid}").json()["state"] == "reserved"
    assert "provisioned" in onsa.step("provision", cid).output
    assert onsa.step("query", cid).states == ("ReserveStart", "Provisioned", "Created")
    assert "released" in onsa.step("release", cid).output
    assert onsa.step("query", cid).states == ("ReserveStart", "Released", "Created")
    assert "terminated" in onsa.step("terminate", cid).output
    assert onsa.step("query", cid).states == ("ReserveStart", "Released", "Terminated")
    assert _rest(braid, operator, f"/v1/reservations/{cid}").json()["state"] == "cancelled"
    assert _booked(braid, operator) == []


def test_a_request_that_does_not_fit_fails_naming_the_reason(
    onsa: Onsa, braid: BraidNsi, operator: dict[str, str]
) -> None:
    refused = onsa.reserve(
        "braid.test:topology:p1?vlan=1782", "braid.test:topology:p3?vlan=1782", 5000, START, END
    )
    assert "BandwidthUnavailableError" in refused.output  # NSI 00705
    assert "5 Gbit/s" in refused.output and "p1" in refused.output
    assert _booked(braid, operator) == []


@pytest.mark.parametrize(
    ("source", "dest", "start", "end", "error"),
    [
        ("braid.test:topology:p9?vlan=1780", "braid.test:topology:p3?vlan=1781", START, END, "p9"),
        (
            "braid.test:topology:p1?vlan=1800",
            "braid.test:topology:p3?vlan=1781",
            START,
            END,
            "1800",
        ),
        (
            "braid.test:topology:p1?vlan=1780",
            "braid.test:topology:p3?vlan=1781",
            END,
            START,
            "endTime",
        ),
    ],
)
def test_onsa_s_bad_requests_are_refused_and_book_nothing(
    onsa: Onsa,
    braid: BraidNsi,
    operator: dict[str, str],
    source: str,
    dest: str,
    start: str,
    end: str,
    error: str,
) -> None:
    refused = onsa.reserve(source, dest, 100, start, end)
    assert "Error from urn:ogf:network:braid.test:nsa" in refused.output, refused.output
    assert error in refused.output
    assert _booked(braid, operator) == []


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        (b"<soap:Envelope><soap:Body>", b"00100"),
        (XXE, b"00100"),
        (LAUGHS, b"00100"),
        # No replyTo: the request is answered, and its fault read, in its own response.
        (request("reserve", source="p1?vlan=1780", dest="p1?vlan=1781", reply_to=""), b"00100"),
    ],
)
def test_malformed_and_hostile_soap_gets_faults_and_no_memory_blow_up(
    braid: BraidNsi, operator: dict[str, str], pki: Pki, payload: bytes, code: bytes
) -> None:
    before = _rss_kib(braid.pid)
    listed = pki.tls.trusting()
    listed.load_cert_chain(pki.onsa().certificate, pki.onsa().key)  # a listed requester's
    answer = httpx.post(braid.provider, content=payload, timeout=10, verify=listed)
    assert answer.status_code == 500
    assert b"serviceException" in answer.content and code in answer.content
    assert _rss_kib(braid.pid) - before < 50 * 1024
    assert _booked(braid, operator) == []


@pytest.mark.parametrize(
    ("certificate", "requester", "other_callback", "said"),
    [
        ("stranger", "requester.test:nsa", False, "is not known"),
        ("onsa-requester", "other.test:nsa", False, "may not act as"),
        ("onsa-requester", "requester.test:nsa", True, "is not an endpoint registered"),
    ],
)
def test_onsa_is_refused_unless_its_certificate_nsa_and_reply_to_are_on_the_list(
    script: Path,
    braid: BraidNsi,
    operator: dict[str, str],
    pki: Pki,
    certificate: str,
    requester: str,
    other_callback: bool,
    said: str,
) -> None:
    callback = free_port() if other_callback else pki.callback
    tls = pki.onsa(certificate)
    other = Onsa(script, braid.provider, "braid.test:nsa", callback, requester, tls)
    refused = other.reserve(
        "braid.test:topology:p1?vlan=1784", "braid.test:topology:p3?vlan=1784", 100, START, END
    )
    assert "Error from urn:ogf:network:braid.test:nsa" in refused.output, refused.output
    assert said in " ".join(refused.output.split())
    assert _booked(braid, operator) == []


def test_the_same_cycle_against_opennsa_itself_leaves_nothing_held_or_active(
    peer: Onsa, onsa: Onsa, braid: BraidNsi, operator: dict[str, str]
) -> None:
    _, at_peer = _cycle(peer, "peer.test:topology:p1?vlan=1783", "peer.test:topology:p2?vlan=1783")
    assert at_peer[0][0] == "ReserveHeld"
    assert at_peer[-1] == ("ReserveStart", "Released", "Terminated")
    _, at_braid = _cycle(
        onsa, "braid.test:topology:p1?vlan=1783", "braid.test:topology:p3?vlan=1783"
    )
    assert at_braid[1:] == at_peer[1:]  # the same states at every step after the hold
    # Both providers, asked for every connection of the requester: none left held or active.
    for provider in (peer, onsa):
        listed = provider.run("query")
        assert listed.all_states(), "the query listed nothing"
        assert listed.live() == [], listed.output
    assert _booked(braid, operator) == []


def _rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    line = next(x for x in status.splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1])


AGGREGATOR_NRM = """\
ethernet p1 - vlan:1780-1789 1000 em1 -
ethernet tobraid braid.test:topology#p1(-in|-out) vlan:1780-1789 1000 em2 -
"""


@pytest.fixture(scope="module")
def open_braid(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BraidNsi]:
    """braid serve with --insecure: the peer's start script configures OpenNSA's own
    service without TLS, so OpenNSA as a requester has no client certificate to show."""
    workdir = tmp_path_factory.mktemp("braid-nsi-open")
    topology = workdir / "topology.yaml"
    topology.write_text(TOPOLOGY, encoding="utf-8")
    with braid_with_nsi(BRAID, topology, workdir) as served:
        yield served


def test_opennsa_as_aggregator_commits_in_its_domain_and_in_braid(
    script: Path,
    open_braid: BraidNsi,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """onsa asks OpenNSA for a path from its own port to braid's p3: OpenNSA reserves its
    segment and, as braid's requester, braid's (found through braid's discovery document)."""
    braid, operator = open_braid, _operator_of(open_braid)
    home = tmp_path_factory.mktemp("aggregator")
    nrm = home / "aggregator.nrm"
    nrm.write_text(AGGREGATOR_NRM, encoding="utf-8")
    discovery = braid.url + "/NSI/discovery.xml"
    try:
        with opennsa_peer(script, home, "agg.test", nrm=nrm, peers=discovery) as url:
            wait_for_log(home, "Spawned new provider for <NetworkServiceAgent braid.test:nsa>")
            agg = Onsa(script, url, "agg.test:nsa", free_port())
            reserved = agg.reserve(
                "agg.test:topology:p1?vlan=1786",
                "braid.test:topology:p3?vlan=1786",
                100,
                "2030-03-01T10:00:00",
                "2030-03-01T11:00:00",
            )
            cid = reserved.connection_id
            assert agg.step("query", cid).states[0] == "ReserveHeld"
            child = _child(braid, operator)
            assert child["state"] == "held" and child["dst"] == "p3"
            assert "committed" in agg.step("reservecommit", cid).output
            assert agg.step("query", cid).states == ("ReserveStart", "Released", "Created")
            assert (
                _rest(braid, operator, f"/v1/reservations/{child['id']}").json()["state"]
                == "reserved"
            )
            assert "terminated" in agg.step("terminate", cid).output
            assert agg.step("query", cid).states[2] == "Terminated"
            assert agg.run("query").live() == []
    except PeerMissingError as exc:
        _missing(str(exc))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    assert _booked(braid, operator) == []


def _child(braid: BraidNsi, operator: dict[str, str]) -> dict[str, object]:
    """The one reservation the aggregator holds at braid (it books as its NSA id)."""
    booked = [
        r for r in _booked(braid, operator) if r["owner"] == "nsi:urn:ogf:network:agg.test:nsa"
    ]
    assert len(booked) == 1, booked
    return booked[0]

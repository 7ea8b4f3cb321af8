"""braid as an NSI requester: a real OpenNSA is one domain of braid's orchestrator.

Two braid agent domains (sites a and b, real `braid agent` processes) meet
through an OpenNSA domain (kind `nsi`), reached by a real `braid orchestrator`
process. Both sides are asked each time: the agents' Status and the
orchestrator's Lookup, and OpenNSA through its own requester CLI `onsa`
(acting as braid's requester NSA id, so OpenNSA shows it braid's connections).
"""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import yaml

from braid.adapters.api.interdomain import mount_interdomain
from braid.adapters.free_ports import free_port
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.bootstrap.local_cluster import LocalCluster
from braid.bootstrap.orchestrator import open_interdomain
from braid.testing.opennsa import (
    NARROW_NRM,
    Onsa,
    PeerMissingError,
    opennsa_peer,
    peer_script,
    requester_network,
)
from tests.integration.negotiation.conftest import assert_ledgers_agree, states, wait_until

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
DOMAIN = "onsa-req.test"
REQUESTER = "braid-orchestrator.test:nsa"  # onsa prefixes urn:ogf:network:
FREED = (pb.HOLD_STATE_ABORTED, pb.HOLD_STATE_RELEASED)


def _topology(provider: str) -> dict[str, object]:
    return requester_network(provider, DOMAIN, f"urn:ogf:network:{REQUESTER}")


@pytest.fixture(scope="module")
def script() -> Path:
    try:
        return peer_script(ROOT)
    except PeerMissingError as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{exc} (CI=true: failing instead of skipping)")
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def peer(script: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("opennsa-requester")
    nrm = home / "ports.nrm"
    nrm.write_text(NARROW_NRM, encoding="utf-8")
    try:
        with opennsa_peer(script, home, DOMAIN, nrm=nrm) as url:
            yield url
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def onsa(script: Path, peer: str) -> Onsa:
    """OpenNSA's own CLI, asking as braid's requester NSA."""
    return Onsa(script, peer, f"{DOMAIN}:nsa", free_port(), requester=REQUESTER)


@pytest.fixture
def cluster(peer: str, tmp_path: Path) -> Iterator[LocalCluster]:
    source = tmp_path / "net.yaml"
    source.write_text(yaml.safe_dump(_topology(peer), sort_keys=False), encoding="utf-8")
    args = ["--timeout", "30", "--hold", "30"]
    with LocalCluster(source, tmp_path / "run", orchestrator_args=args) as running:
        yield running


def _request(rid: str) -> pb.Reservation:
    now = int(time.time())
    return pb.Reservation(
        id=rid,
        source=pb.Endpoint(domain="site-a", point="a-host"),
        destination=pb.Endpoint(domain="site-b", point="b-host"),
        bandwidth_bps=100 * 10**6,
        window=pb.Window(start=now + 120, end=now + 3600),
        max_paths=1,
    )


def _rid(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"  # fresh per run: the peer's database is shared


def _lookup(cluster: LocalCluster, rid: str) -> pb.ReservationResp:
    def answer() -> pb.ReservationResp | None:
        try:
            found: pb.ReservationResp = cluster.orchestrator().Lookup(
                pb.ReservationQuery(id=rid), timeout=5
            )
        except grpc.RpcError:
            return None
        return found

    found: pb.ReservationResp | None = wait_until(answer, timeout=30)
    assert found is not None, f"no answer for {rid}"
    return found


def _opennsa(onsa: Onsa) -> list[tuple[str, ...]]:
    """Every connection braid's requester NSA has at OpenNSA: (reservation, provision,
    lifecycle), as OpenNSA's own CLI reports them."""
    listed = onsa.run("query")
    assert "Error" not in listed.output, listed.output
    return listed.all_states()


def _nothing_live_at_opennsa(onsa: Onsa) -> None:
    def settled() -> bool:
        return all(s[0] != "ReserveHeld" and s[2] == "Terminated" for s in _opennsa(onsa))

    assert wait_until(settled, timeout=30), _opennsa(onsa)


def _agents(cluster: LocalCluster, tx: str) -> dict[str, int]:
    return states(cluster, tx)


def test_a_reservation_across_a_braid_domain_and_opennsa_commits_and_cancels(
    cluster: LocalCluster, onsa: Onsa
) -> None:
    before = len(_opennsa(onsa))
    rid = _rid("r-nsi")
    reply = cluster.reserve(_request(rid), timeout=60)
    assert reply.success, reply.reason + "\n" + "\n".join(str(e) for e in reply.trace)
    held = {h.domain: h.state for h in _lookup(cluster, rid).holdings}
    assert held == {"site-a": "committed", "onsa": "committed", "site-b": "committed"}
    assert set(_agents(cluster, reply.transaction_id).values()) == {pb.HOLD_STATE_COMMITTED}
    assert_ledgers_agree(cluster, [reply])  # an agent without a report (onsa) is not asked
    # OpenNSA picked the VLANs on the links it owns; braid's result carries them.
    assert {v.link for p in reply.paths for v in p.vlans} >= {"a-onsa", "onsa-b"}
    seen = _opennsa(onsa)
    assert len(seen) == before + 1, seen
    assert seen[-1] == ("ReserveStart", "Provisioned", "Created"), seen

    cancelled = cluster.orchestrator().Cancel(pb.CancelQuery(id=rid), timeout=60)
    assert cancelled.status == "cancelled"
    assert {h.state for h in cancelled.holdings} == {"released"}
    assert set(_agents(cluster, reply.transaction_id).values()) == {pb.HOLD_STATE_RELEASED}
    assert _opennsa(onsa)[-1][2] == "Terminated"
    _nothing_live_at_opennsa(onsa)
    assert_ledgers_agree(cluster, [])


def test_orchestrator_killed_between_reserve_and_commit_ends_the_opennsa_connection(
    cluster: LocalCluster, onsa: Onsa
) -> None:
    before = len(_opennsa(onsa))
    cluster.terminate("site-b")  # site-b votes late: OpenNSA holds while it prepares
    cluster.start_agent("site-b", env={"BRAID_FAULT_AGENT": "slow-prep=20"})
    rid = _rid("r-nsi-kill")
    failures: list[grpc.RpcError] = []

    def call() -> None:
        try:
            cluster.reserve(_request(rid), timeout=60)
        except grpc.RpcError as exc:  # the orchestrator dies under it
            failures.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    held = wait_until(lambda: [s for s in _opennsa(onsa)[before:] if s[0] == "ReserveHeld"])
    assert held, _opennsa(onsa)
    cluster.kill("orchestrator")  # kill -9 between reserve and commit
    caller.join()
    assert failures
    cluster.terminate("site-b")
    cluster.start_agent("site-b")
    cluster.start_orchestrator()  # presumed abort: OpenNSA's connection is ended
    answer = _lookup(cluster, rid)
    assert not answer.success and "restarted before deciding" in answer.reason
    assert wait_until(
        lambda: all(s in FREED for s in _agents(cluster, answer.transaction_id).values())
    ), _agents(cluster, answer.transaction_id)
    assert len(_opennsa(onsa)) == before + 1
    _nothing_live_at_opennsa(onsa)
    assert_ledgers_agree(cluster, [])
    again = _lookup(cluster, rid)  # the answer after recovery stands
    assert (again.status, again.transaction_id) == (answer.status, answer.transaction_id)


def test_a_refusal_at_opennsa_refuses_the_whole_reservation(
    cluster: LocalCluster, onsa: Onsa, script: Path, peer: str
) -> None:
    other = Onsa(script, peer, f"{DOMAIN}:nsa", free_port())  # another requester
    window = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + 60))
    end = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + 7200))
    blockers = [
        other.reserve(f"{DOMAIN}:topology:p1?vlan={v}", f"{DOMAIN}:topology:p2?vlan={v}",
                      10, window, end).connection_id
        for v in (1780, 1781)
    ]  # fmt: skip
    try:
        rid = _rid("r-nsi-refused")
        reply = cluster.reserve(_request(rid), timeout=60)
        assert not reply.success
        assert "onsa" in reply.reason, reply.reason
        said = [e.text for e in reply.trace if e.domain == "onsa"]
        assert any("not available" in text and f"{DOMAIN}:nsa" in text for text in said), said
        assert all(s in FREED for s in _agents(cluster, reply.transaction_id).values())
        _nothing_live_at_opennsa(onsa)
        assert_ledgers_agree(cluster, [])
    finally:
        for connection in blockers:
            other.step("terminate", connection)


def test_through_braid_serve_s_rest_api_the_same_domain_commits_and_cancels(
    cluster: LocalCluster, onsa: Onsa, tmp_path: Path
) -> None:
    """`braid serve --domains` runs its own orchestrator in-process: the same NSI domain,
    seen and cancelled through REST."""
    with warnings.catch_warnings():  # as tests/api/conftest.py: Starlette's, not ours
        warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
        from tests.api.harness import build

    service = open_interdomain(
        cluster.file, tmp_path / "serve-negotiation.db", token=cluster.peer_token
    )
    try:
        api = build()
        mount_interdomain(api.app, service)
        start = int(time.time()) + 120
        sent = {
            "src": {"domain": "site-a", "point": "a-host"},
            "dst": {"domain": "site-b", "point": "b-host"},
            "bandwidth": "100M",
            "start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start)),
            "end": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + 3600)),
        }
        made = api.client.post("/v1/interdomain/reservations", json=sent, headers=api.auth("alice"))
        assert made.status_code == 201, made.text
        view = made.json()
        assert view["holdings"] == dict.fromkeys(("site-a", "onsa", "site-b"), "committed")
        assert {v["link"] for p in view["paths"] for v in p["vlans"]} >= {"a-onsa", "onsa-b"}
        assert _opennsa(onsa)[-1] == ("ReserveStart", "Provisioned", "Created")
        path = f"/v1/interdomain/reservations/{view['id']}"
        gone = api.client.delete(path, headers=api.auth("alice"))
        assert gone.status_code == 200, gone.text
        shown = api.client.get(path, headers=api.auth("alice")).json()
        assert shown["status"] == "cancelled"
        assert set(shown["holdings"].values()) == {"released"}
    finally:
        service.close()
    _nothing_live_at_opennsa(onsa)
    assert_ledgers_agree(cluster, [])


def _connections(onsa: Onsa) -> dict[str, tuple[tuple[str, ...], str]]:
    """Each connection braid's requester NSA has at OpenNSA (its own CLI's listing, in no
    particular order): id -> ((reservation, provision, lifecycle), bandwidth in Mbit/s)."""
    listed = onsa.run("query").output
    out = {}
    for block in re.split(r"\n(?=Connection\s)", listed)[1:]:
        name = re.search(r"Connection\s+(\S+)", block)
        states = re.search(r"States\s+(.+)", block)
        mbps = re.search(r"Bandwidth\s+(\d+)", block)
        assert name and states and mbps, block
        out[name.group(1)] = (tuple(x.strip() for x in states.group(1).split(",")), mbps.group(1))
    return out


def test_a_modify_across_opennsa_is_a_new_connection_and_ends_the_old_one(
    cluster: LocalCluster, onsa: Onsa
) -> None:
    """Make-before-break through an NSI domain: OpenNSA reserves, commits and provisions a
    second connection beside the first; once braid's decision is logged, the first is
    terminated there, and the agents release the old version."""
    before = set(_connections(onsa))
    rid = _rid("r-nsi-modify")
    first = cluster.reserve(_request(rid), timeout=60)
    assert first.success, first.reason
    query = pb.ModifyQuery(id=rid, bandwidth_bps=200 * 10**6)
    new = cluster.orchestrator().Modify(query, timeout=90)
    assert new.success and new.status == "committed", new.reason
    assert new.transaction_id != first.transaction_id
    assert sum(p.bandwidth_bps for p in new.paths) == 200 * 10**6
    held = {h.domain: h.state for h in _lookup(cluster, rid).holdings}
    assert held == {"site-a": "committed", "onsa": "committed", "site-b": "committed"}
    assert set(_agents(cluster, first.transaction_id).values()) == {pb.HOLD_STATE_RELEASED}
    assert set(_agents(cluster, new.transaction_id).values()) == {pb.HOLD_STATE_COMMITTED}
    # Each version got its own VLANs at OpenNSA (the old one held its own while both lived).
    assert {v.link for p in new.paths for v in p.vlans} >= {"a-onsa", "onsa-b"}
    made = {c: seen for c, seen in _connections(onsa).items() if c not in before}
    assert sorted(made.values(), key=lambda seen: seen[1]) == [
        (("ReserveStart", "Provisioned", "Terminated"), "100"),  # the first version's
        (("ReserveStart", "Provisioned", "Created"), "200"),
    ], made
    assert_ledgers_agree(cluster, [new])

    cancelled = cluster.orchestrator().Cancel(pb.CancelQuery(id=rid), timeout=60)
    assert cancelled.status == "cancelled"
    assert set(_agents(cluster, new.transaction_id).values()) == {pb.HOLD_STATE_RELEASED}
    _nothing_live_at_opennsa(onsa)
    assert_ledgers_agree(cluster, [])

"""Every RPC of the Orchestrator and DomainAgent services, as the protobuf descriptors
list them, called with every kind of bad credentials: no unauthorised call succeeds.

Credentials: none, a wrong token, a revoked token, an expired token, another user's
token for a reservation it does not own, a role that may not use the service (a
monitor), and, against servers with mutual TLS, no client certificate. Each
request is one the right caller would have answered (checked too), so a refusal
is the door's, not the request's.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from braid.adapters.rpc.channels import TlsFiles, bearer, open_channel
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.rpc.v1 import negotiation_pb2_grpc as pb_grpc
from braid.app.auth import create_token, hash_token
from braid.app.records import token_id
from braid.bootstrap.local_cluster import LocalCluster
from braid.bootstrap.serve import close_store, open_store
from tests.certificates import issue_certificate
from tests.integration.negotiation.conftest import SMALL

pytestmark = pytest.mark.slow

G = 10**9
OWNED = "r-alice"
SERVICES = ("Orchestrator", "DomainAgent")
CASES = ("none", "wrong", "revoked", "expired", "other-user", "wrong-role")


def _methods(service: str) -> list[Any]:
    return list(pb.DESCRIPTOR.services_by_name[service].methods)


def _window() -> pb.Window:
    now = int(time.time())
    return pb.Window(start=now + 600, end=now + 1200)


# Alice's window, fixed: a retry is the very same request.
START = int(time.time()) + 3600


def alice_request() -> pb.Reservation:
    return pb.Reservation(
        id=OWNED,
        source=pb.Endpoint(domain="site-a", point="a-host"),
        destination=pb.Endpoint(domain="site-b", point="b-host"),
        bandwidth_bps=2 * G,
        window=pb.Window(start=START, end=START + 3600),
        strategy=pb.STRATEGY_PARTIAL_OFFERS,
        max_paths=2,
    )


def _offers(tx: str) -> pb.ReqOffers:
    span = pb.Span(entry="w1-x", exit="w1-y")
    return pb.ReqOffers(transaction_id=tx, token="t" * 20, window=_window(), spans=[span])


def _prep(tx: str) -> pb.ReservationPrep:
    segment = pb.Segment(span=pb.Span(entry="w1-x", exit="w1-y"), bandwidth_bps=G)
    return pb.ReservationPrep(
        transaction_id=tx, token="t" * 20, window=_window(), segments=[segment], hold_seconds=2
    )


@dataclass
class Owned:
    """Alice's committed reservation: its id and transaction."""

    transaction: str


def requests(owned: Owned) -> dict[str, Callable[[], Any]]:
    """A request for every RPC (by service and name): what its rightful caller may ask."""
    tx = owned.transaction
    probe = f"probe-{secrets.token_hex(4)}"
    return {
        "Orchestrator.Reserve": alice_request,
        "Orchestrator.Lookup": lambda: pb.ReservationQuery(id=OWNED),
        "Orchestrator.Cancel": lambda: pb.CancelQuery(id=OWNED),
        "Orchestrator.Modify": lambda: pb.ModifyQuery(id=OWNED, bandwidth_bps=3 * G),
        "Orchestrator.Decide": lambda: pb.DecisionQuery(
            transaction_id=tx, token="t" * 20, domain="w1"
        ),
        "DomainAgent.Describe": pb.DescribeQuery,
        "DomainAgent.View": pb.ViewQuery,
        "DomainAgent.RequestOffers": lambda: _offers(probe),
        "DomainAgent.Prepare": lambda: _prep(probe),
        "DomainAgent.CommitHold": lambda: pb.Commit(transaction_id=tx, token="t" * 20),
        "DomainAgent.AbortHold": lambda: pb.Abort(transaction_id=tx, token="t" * 20),
        "DomainAgent.ReleaseHold": lambda: pb.Release(transaction_id=tx, token="t" * 20),
        "DomainAgent.Status": pb.StatusQuery,
        "DomainAgent.Exchange": lambda: pb.AgentBatch(
            items=[pb.AgentMessage(offers=_offers(probe))]
        ),
        "DomainAgent.ExchangeStream": lambda: pb.AgentBatch(
            items=[pb.AgentMessage(prep=_prep(probe))]
        ),
    }


def call(channel: Any, service: str, method: Any, request: Any, metadata: Any) -> Any:
    """Call `method` of `service` as the descriptor gives it (streams too)."""
    stub = (pb_grpc.OrchestratorStub if service == "Orchestrator" else pb_grpc.DomainAgentStub)(
        channel
    )
    rpc = getattr(stub, method.name)
    if method.client_streaming:
        return list(rpc(iter([request]), metadata=metadata, timeout=10))
    return rpc(request, metadata=metadata, timeout=10)


@dataclass
class Setup:
    cluster: LocalCluster
    tokens: dict[str, str]  # case -> the bearer token it sends (none: absent)
    owned: Owned


def _tokens(cluster: LocalCluster) -> dict[str, str]:
    repo = open_store(cluster.database)
    now = int(time.time())
    try:
        made = {
            "alice": create_token(repo, "alice", "user", now),
            "other-user": create_token(repo, "bob", "user", now),
            "wrong-role": create_token(repo, "watcher", "monitor", now),
            "revoked": create_token(repo, "alice", "user", now),
            "expired": create_token(repo, "alice", "user", now, expires_in=1),
        }
        repo.revoke_tokens(
            now=now, actor="test", prefix=token_id(hash_token(made["revoked"])), user="alice"
        )
    finally:
        close_store(repo)
    made["wrong"] = "brd_" + secrets.token_urlsafe(32)
    return made


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    folder = tmp_path_factory.mktemp("closed")
    source = folder / "small.yaml"
    source.write_text(yaml.safe_dump(SMALL))
    with LocalCluster(source, folder / "run", orchestrator_args=["--timeout", "2"]) as cluster:
        tokens = _tokens(cluster)
        channel = open_channel(f"127.0.0.1:{cluster.ports['orchestrator']}")
        try:
            reply = pb_grpc.OrchestratorStub(channel).Reserve(
                alice_request(), metadata=bearer(tokens["alice"]), timeout=30
            )
        finally:
            channel.close()
        assert reply.success, reply.reason
        time.sleep(1.5)  # the expiring token is past its time
        yield Setup(cluster, tokens, Owned(reply.transaction_id))


def _metadata(setup: Setup, case: str) -> tuple[tuple[str, str], ...]:
    return () if case == "none" else bearer(setup.tokens[case])


def _address(setup: Setup, service: str) -> str:
    name = "orchestrator" if service == "Orchestrator" else "w1"
    return f"127.0.0.1:{setup.cluster.ports[name]}"


def test_every_rpc_of_both_services_has_a_request() -> None:
    listed = {f"{s}.{m.name}" for s in SERVICES for m in _methods(s)}
    assert listed == set(requests(Owned("tx")))


def test_no_rpc_succeeds_with_bad_credentials(setup: Setup) -> None:
    made = requests(setup.owned)
    successes: list[str] = []
    refusals: dict[str, set[str]] = {}
    for service in SERVICES:
        channel = open_channel(_address(setup, service))
        try:
            for method in _methods(service):
                for case in CASES:
                    name = f"{service}.{method.name}"
                    try:
                        call(channel, service, method, made[name](), _metadata(setup, case))
                    except grpc.RpcError as exc:
                        refusals.setdefault(name, set()).add(exc.code().name)
                    else:
                        successes.append(f"{name} with {case}")
        finally:
            channel.close()
    assert successes == []
    # Refused at the door (or, for Decide, by the transaction's token), never INTERNAL.
    door = {"UNAUTHENTICATED", "PERMISSION_DENIED", "NOT_FOUND", "ALREADY_EXISTS"}
    assert all(codes <= door for codes in refusals.values()), refusals


def test_the_rightful_callers_are_answered_and_nothing_changed(setup: Setup) -> None:
    cluster = setup.cluster
    alice = bearer(setup.tokens["alice"])
    channel = open_channel(_address(setup, "Orchestrator"))
    try:
        stub = pb_grpc.OrchestratorStub(channel)
        again = stub.Reserve(alice_request(), metadata=alice, timeout=30)  # a retry
        seen = stub.Lookup(pb.ReservationQuery(id=OWNED), metadata=alice, timeout=10)
        other = pb.Reservation()
        other.CopyFrom(alice_request())
        other.bandwidth_bps = 3 * G
        with pytest.raises(grpc.RpcError) as taken:
            stub.Reserve(other, metadata=alice, timeout=30)
    finally:
        channel.close()
    assert again.success and again.transaction_id == setup.owned.transaction
    assert seen.status == "committed"
    assert taken.value.code() is grpc.StatusCode.ALREADY_EXISTS
    assert "taken by a different request" in (taken.value.details() or "")
    agent = cluster.agent("w1")  # the cluster's own channel carries its peer token
    assert agent.Describe(pb.DescribeQuery(), timeout=10).domain == "w1"
    offered = agent.RequestOffers(_offers("probe-ok"), timeout=10)
    assert offered.offers[0].bandwidth_bps > 0
    report = agent.Status(pb.StatusQuery(), timeout=10)
    held = {t.transaction_id for t in report.transactions if t.state == pb.HOLD_STATE_HELD}
    assert not {t for t in held if t.startswith("probe-")}


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalCluster, Path]]:
    folder = tmp_path_factory.mktemp("closed-tls")
    ca = issue_certificate(folder, "ca", None)
    for name in ("agent", "orchestrator", "client"):
        issue_certificate(folder, name, ca)
    source = folder / "small.yaml"
    source.write_text(yaml.safe_dump(SMALL))

    def tls(name: str) -> list[str]:
        return [
            "--tls-cert", str(folder / f"{name}.pem"), "--tls-key", str(folder / f"{name}.key"),
            "--tls-ca", str(folder / "ca.pem"),
        ]  # fmt: skip

    cluster = LocalCluster(
        source,
        folder / "run",
        orchestrator_args=["--timeout", "2", *tls("orchestrator")],
        agent_args=tls("agent"),
        client_tls=TlsFiles(folder / "client.pem", folder / "client.key", folder / "ca.pem"),
    )
    with cluster:
        yield cluster, folder


def test_no_rpc_succeeds_without_a_client_certificate(
    tls_cluster: tuple[LocalCluster, Path],
) -> None:
    cluster, folder = tls_cluster
    request = alice_request()
    request.id = "r-certified"
    reply = cluster.reserve(request)  # the cluster's own client has a certificate
    assert reply.success, reply.reason
    made = requests(Owned(reply.transaction_id))
    made["Orchestrator.Reserve"] = lambda: request
    anonymous = TlsFiles(None, None, folder / "ca.pem")  # checks the server, shows nothing
    successes = []
    for service in SERVICES:
        name = "orchestrator" if service == "Orchestrator" else "w1"
        channel = open_channel(f"127.0.0.1:{cluster.ports[name]}", tls=anonymous)
        try:
            for method in _methods(service):
                try:
                    call(channel, service, method, made[f"{service}.{method.name}"](), ())
                except grpc.RpcError:
                    continue
                successes.append(f"{service}.{method.name}")
        finally:
            channel.close()
    assert successes == []


def test_a_known_peers_short_hold_ends_and_its_own_commit_is_refused(setup: Setup) -> None:
    """The probe's holds, asked by a caller the agent knows: a two-second hold with no
    coordinator is freed by the sweep; a Commit its coordinator never decided is refused."""
    cluster = setup.cluster
    agent = cluster.agent("w1")
    vote = agent.Prepare(_prep("probe-short"), timeout=10)
    assert vote.yes and vote.hold_expires_at <= int(time.time()) + 2
    named = _prep("probe-commit")
    named.hold_seconds = 60
    named.coordinator = f"127.0.0.1:{cluster.ports['orchestrator']}"
    assert agent.Prepare(named, timeout=10).yes
    with pytest.raises(grpc.RpcError) as refused:
        agent.CommitHold(pb.Commit(transaction_id="probe-commit", token="t" * 20), timeout=10)
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "has no commit decision" in (refused.value.details() or "")
    deadline = time.time() + 10
    while time.time() < deadline:
        states = {
            t.transaction_id: t.state
            for t in agent.Status(pb.StatusQuery(), timeout=10).transactions
        }
        if states.get("probe-short") == pb.HOLD_STATE_EXPIRED:
            break
        time.sleep(0.5)
    assert states["probe-short"] == pb.HOLD_STATE_EXPIRED
    assert states["probe-commit"] != pb.HOLD_STATE_COMMITTED

"""Agents with a peer policy, as real processes: mutual TLS names the peer by its
certificate, or (without TLS) a bearer token does; unknown peers are refused and a
peer over its limit is refused naming the rule, with nothing held anywhere."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import yaml

from braid.adapters.rpc.agent_client import GrpcAgentPool
from braid.adapters.rpc.channels import TlsFiles, open_channel
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.rpc.v1 import negotiation_pb2_grpc as pb_grpc
from braid.app.agent.messages import OffersCall
from braid.app.negotiation.ports import CallFailedError
from braid.app.records import User
from braid.bootstrap.local_cluster import LocalCluster
from braid.bootstrap.orchestrator import open_interdomain
from tests.certificates import issue_certificate
from tests.integration.negotiation.conftest import assert_ledgers_agree, reservation

pytestmark = pytest.mark.slow
G = 10**9
TOKEN = "orchestrator-token-0123456789"

# Two sites behind one WAN: every reservation crosses all three agents.
LINE = {
    "domains": [
        {"id": "site-a", "kind": "site", "agent": "127.0.0.1:1"},
        {"id": "w1", "kind": "wan", "agent": "127.0.0.1:2"},
        {"id": "site-b", "kind": "site", "agent": "127.0.0.1:3"},
    ],
    "nodes": [
        {"id": "a-host", "domain": "site-a"},
        {"id": "a-edge", "domain": "site-a"},
        {"id": "w1-x", "domain": "w1"},
        {"id": "w1-y", "domain": "w1"},
        {"id": "b-edge", "domain": "site-b"},
        {"id": "b-host", "domain": "site-b"},
    ],
    "links": [
        {"id": "a-lan", "a": "a-host", "b": "a-edge", "capacity": "40G"},
        {"id": "b-lan", "a": "b-edge", "b": "b-host", "capacity": "40G"},
        {"id": "a-w1", "a": "a-edge", "b": "w1-x", "capacity": "40G", "vlans": "100-199"},
        {"id": "w1-b", "a": "w1-y", "b": "b-edge", "capacity": "40G", "vlans": "300-399"},
        {"id": "w1-core", "a": "w1-x", "b": "w1-y", "capacity": "10G"},
    ],
}


def _write_policies(folder: Path, peer: dict[str, object]) -> dict[str, list[str]]:
    """Every agent knows the orchestrator as peer `orch`; w1 limits it to 5 Gbit/s."""
    args = {}
    for domain in ("site-a", "w1", "site-b"):
        limits = {"max_bandwidth": "5G", "max_duration": "2h"} if domain == "w1" else {}
        path = folder / f"{domain}-policy.yaml"
        path.write_text(yaml.safe_dump({"peers": {"orch": {**peer, **limits}}}))
        args[domain] = ["--policy", str(path)]
    return args


def _cluster(folder: Path) -> LocalCluster:
    source = folder / "line.yaml"
    source.write_text(yaml.safe_dump(LINE))
    return LocalCluster(
        source, folder / "run", orchestrator_args=["--timeout", "2", "--hold", "30"]
    )


@pytest.fixture
def mtls(tmp_path: Path) -> Iterator[tuple[LocalCluster, Path]]:
    ca = issue_certificate(tmp_path, "ca", None)
    for name in ("agent", "orchestrator", "stranger"):
        issue_certificate(tmp_path, name, ca)
    cluster = _cluster(tmp_path)
    cluster.domain_args = _write_policies(tmp_path, {"subjects": ["orchestrator"]})

    def tls(name: str) -> list[str]:
        return [
            "--tls-cert", str(tmp_path / f"{name}.pem"), "--tls-key", str(tmp_path / f"{name}.key"),
            "--tls-ca", str(tmp_path / "ca.pem"),
        ]  # fmt: skip

    cluster.agent_args = tls("agent")
    cluster.orchestrator_args += tls("orchestrator")
    cluster.client_tls = _certified(tmp_path, "orchestrator")
    with cluster:
        yield cluster, tmp_path


@pytest.fixture
def tokens(tmp_path: Path) -> Iterator[LocalCluster]:
    (tmp_path / "orch.token").write_text(TOKEN + "\n")
    cluster = _cluster(tmp_path)
    cluster.domain_args = _write_policies(tmp_path, {"token_file": "orch.token"})
    cluster.orchestrator_args += ["--peer-token-file", str(tmp_path / "orch.token")]
    cluster.agent_token = TOKEN  # the test's own calls (Status) as the same peer
    with cluster:
        yield cluster


def _certified(folder: Path, name: str) -> TlsFiles:
    return TlsFiles(folder / f"{name}.pem", folder / f"{name}.key", folder / "ca.pem")


def _offer(cluster: LocalCluster, tls: TlsFiles | None, token: str | None = None) -> list[int]:
    now = int(time.time())
    pool = GrpcAgentPool({"w1": f"127.0.0.1:{cluster.ports['w1']}"}, tls=tls, token=token)
    try:
        call = OffersCall("tx-1", "t" * 20, (now + 60, now + 600), (("w1-x", "w1-y"),), True)
        return pool.offers("w1", call).result()  # type: ignore[no-any-return]  # grpc: no hints
    finally:
        pool.close()


def _held_anywhere(cluster: LocalCluster) -> dict[str, list[str]]:
    return {
        d: [t.transaction_id for t in report.transactions if t.state == pb.HOLD_STATE_HELD]
        for d, report in cluster.reports().items()
    }


def test_mutual_tls_peers_are_named_by_their_certificates(
    mtls: tuple[LocalCluster, Path],
) -> None:
    cluster, folder = mtls
    # A certificate from the same CA that names no peer: refused, naming the rule.
    with pytest.raises(CallFailedError) as refused:
        _offer(cluster, _certified(folder, "stranger"))
    assert refused.value.status == "PERMISSION_DENIED"
    assert "policy peers" in refused.value.message and "stranger" in refused.value.message
    channel = open_channel(f"127.0.0.1:{cluster.ports['w1']}", tls=_certified(folder, "stranger"))
    with channel, pytest.raises(grpc.RpcError) as direct:
        now = int(time.time())
        pb_grpc.DomainAgentStub(channel).RequestOffers(
            pb.ReqOffers(
                transaction_id="tx-2",
                token="t" * 20,
                window=pb.Window(start=now + 60, end=now + 600),
                spans=[pb.Span(entry="w1-x", exit="w1-y")],
            ),
            timeout=5,
        )
    assert direct.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert ("braid-error", "ERROR_CODE_POLICY") in (direct.value.trailing_metadata() or ())
    assert _offer(cluster, _certified(folder, "orchestrator")) == [10 * G]

    # The known orchestrator commits within its limit ...
    fits = cluster.reserve(reservation("fits", 4, paths=1))
    assert fits.success, fits.reason
    # ... and over w1's limit the reservation fails naming the domain and the rule,
    # and nothing is left held anywhere.
    over = cluster.reserve(reservation("over", 6, paths=1))
    assert not over.success
    assert "w1 voted no: policy max_bandwidth" in over.reason, over.reason
    assert "6 Gbit/s is more than the 5 Gbit/s allowed for peer orch" in over.reason
    assert _held_anywhere(cluster) == {"site-a": [], "w1": [], "site-b": []}
    assert_ledgers_agree(cluster, [fits, over])


def test_bearer_tokens_name_peers_without_tls(tokens: LocalCluster) -> None:
    cluster = tokens
    for token in (None, "not-the-token-0123456789"):
        with pytest.raises(CallFailedError) as refused:
            _offer(cluster, None, token)
        assert refused.value.status == "UNAUTHENTICATED"
        assert "policy peers" in refused.value.message
    assert _offer(cluster, None, TOKEN) == [10 * G]
    fits = cluster.reserve(reservation("fits", 5, paths=1))
    assert fits.success, fits.reason
    long = reservation("long", 1, paths=1)
    long.window.end = long.window.start + 3 * 3600
    too_long = cluster.reserve(long)
    assert not too_long.success and "policy max_duration" in too_long.reason, too_long.reason
    assert "w1" in too_long.reason
    assert _held_anywhere(cluster) == {"site-a": [], "w1": [], "site-b": []}
    assert_ledgers_agree(cluster, [fits, too_long])


def test_a_stream_from_no_known_peer_is_refused_before_it_sends_anything(
    tokens: LocalCluster,
) -> None:
    """A long-lived ExchangeStream holds one of the agent's threads: a caller no policy
    names must not get one, even by opening streams and never writing to them."""
    address = f"127.0.0.1:{tokens.ports['w1']}"
    with open_channel(address) as channel, pytest.raises(grpc.RpcError) as refused:
        list(pb_grpc.DomainAgentStub(channel).ExchangeStream(iter(()), timeout=5))
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert ("braid-error", "ERROR_CODE_UNAUTHENTICATED") in (
        refused.value.trailing_metadata() or ()
    )


def test_braid_serve_negotiation_sends_its_peer_token(tokens: LocalCluster, tmp_path: Path) -> None:
    """`braid serve --domains FILE --peer-token-file F` builds its negotiation this way:
    agents with a policy take it with the token and refuse it, naming the rule, without."""
    start = int(time.time()) // 3600 * 3600 + 86_400
    body = {
        "src": {"domain": "site-a", "point": "a-host"},
        "dst": {"domain": "site-b", "point": "b-host"},
        "bandwidth": "2G",
        "start": start,
        "end": start + 3600,
        "max_paths": 1,
    }
    user = User("alice", "user")
    outcomes = {}
    for token in (None, TOKEN):
        service = open_interdomain(tokens.file, tmp_path / f"{token is None}.db", token=token)
        try:
            outcomes[token] = service.reserve(user, body)
        finally:
            service.close()
    refused, taken = outcomes[None], outcomes[TOKEN]
    assert not refused.committed
    assert "policy peers" in str(refused.view), refused.view
    assert taken.committed, taken.view
    assert _held_anywhere(tokens) == {"site-a": [], "w1": [], "site-b": []}

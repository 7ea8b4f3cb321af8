"""An agent with mutual TLS: the orchestrator's client with a certificate gets in, others do not."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import yaml

from braid.adapters.rpc.agent_client import GrpcAgentPool
from braid.adapters.rpc.channels import TlsFiles
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.rpc.v1 import negotiation_pb2_grpc as pb_grpc
from braid.app.agent.messages import OffersCall
from braid.app.negotiation.ports import CallFailedError
from braid.bootstrap.local_cluster import LocalCluster
from tests.certificates import issue_certificate
from tests.integration.negotiation.conftest import SMALL

pytestmark = pytest.mark.slow


@pytest.fixture
def tls_agent(tmp_path: Path) -> Iterator[tuple[LocalCluster, Path]]:
    ca = issue_certificate(tmp_path, "ca", None)
    issue_certificate(tmp_path, "agent", ca)
    issue_certificate(tmp_path, "orchestrator", ca)
    source = tmp_path / "small.yaml"
    source.write_text(yaml.safe_dump(SMALL))
    cluster = LocalCluster(source, tmp_path / "run")
    cluster.start_files_only()
    cluster.agent_args = [
        "--tls-cert", str(tmp_path / "agent.pem"), "--tls-key", str(tmp_path / "agent.key"),
        "--tls-ca", str(tmp_path / "ca.pem"),
    ]  # fmt: skip
    try:
        cluster.start_agent("w1")
        yield cluster, tmp_path
    finally:
        cluster.stop()


def _offer(pool: GrpcAgentPool) -> list[int]:
    now = int(time.time())
    call = OffersCall("tx", "t" * 20, (now + 60, now + 600), (("w1-x", "w1-y"),), True)
    return pool.offers("w1", call).result()  # type: ignore[no-any-return]  # grpc: no hints


def test_mutual_tls_lets_in_only_certified_clients(tls_agent: tuple[LocalCluster, Path]) -> None:
    cluster, folder = tls_agent
    address = f"127.0.0.1:{cluster.ports['w1']}"
    certified = TlsFiles(
        folder / "orchestrator.pem", folder / "orchestrator.key", folder / "ca.pem"
    )
    pool = GrpcAgentPool({"w1": address}, tls=certified)
    try:
        assert _offer(pool) == [10 * 10**9]
    finally:
        pool.close()
    anonymous = GrpcAgentPool({"w1": address}, tls=TlsFiles(None, None, folder / "ca.pem"))
    try:
        with pytest.raises(CallFailedError):
            _offer(anonymous)
    finally:
        anonymous.close()
    with grpc.insecure_channel(address) as plain, pytest.raises(grpc.RpcError):
        pb_grpc.DomainAgentStub(plain).Describe(pb.DescribeQuery(), timeout=2)

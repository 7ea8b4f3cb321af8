"""A small multi-domain network served by real agent and orchestrator processes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from braid.adapters.rpc.ledgers import check_ledgers, committed_of
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.bootstrap.local_cluster import LocalCluster

G = 10**9
TOKEN = "test-token-0123456789"

# Two sites joined by two WANs; w2 is blind. Each WAN core carries 10 Gbit/s.
SMALL = {
    "domains": [
        {"id": "site-a", "kind": "site", "agent": "127.0.0.1:1"},
        {"id": "w1", "kind": "wan", "agent": "127.0.0.1:2"},
        {"id": "w2", "kind": "wan", "visible": False, "agent": "127.0.0.1:3"},
        {"id": "site-b", "kind": "site", "agent": "127.0.0.1:4"},
    ],
    "nodes": [
        {"id": "a-host", "domain": "site-a"},
        {"id": "a-edge", "domain": "site-a"},
        {"id": "w1-x", "domain": "w1"},
        {"id": "w1-y", "domain": "w1"},
        {"id": "w2-x", "domain": "w2"},
        {"id": "w2-y", "domain": "w2"},
        {"id": "b-edge", "domain": "site-b"},
        {"id": "b-host", "domain": "site-b"},
    ],
    "links": [
        {"id": "a-lan", "a": "a-host", "b": "a-edge", "capacity": "40G"},
        {"id": "b-lan", "a": "b-edge", "b": "b-host", "capacity": "40G"},
        {"id": "a-w1", "a": "a-edge", "b": "w1-x", "capacity": "40G", "vlans": "100-199"},
        {"id": "a-w2", "a": "a-edge", "b": "w2-x", "capacity": "40G", "vlans": "200-299"},
        {"id": "w1-b", "a": "w1-y", "b": "b-edge", "capacity": "40G", "vlans": "300-399"},
        {"id": "w2-b", "a": "w2-y", "b": "b-edge", "capacity": "40G", "vlans": "400-499"},
        {"id": "w1-core", "a": "w1-x", "b": "w1-y", "capacity": "10G"},
        {"id": "w2-core", "a": "w2-x", "b": "w2-y", "capacity": "10G"},
    ],
}


def _cluster(folder: Path) -> LocalCluster:
    source = folder / "small.yaml"
    source.write_text(yaml.safe_dump(SMALL))
    return LocalCluster(
        source, folder / "run", orchestrator_args=["--timeout", "1", "--hold", "30"]
    )


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with _cluster(tmp_path) as running:
        yield running


@pytest.fixture(scope="module")
def shared_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """One network for tests that leave it as they found it."""
    with _cluster(tmp_path_factory.mktemp("shared")) as running:
        yield running


def reservation(
    rid: str,
    gbps: float,
    *,
    strategy: pb.Strategy.ValueType = pb.STRATEGY_PARTIAL_OFFERS,
    paths: int = 2,
) -> pb.Reservation:
    now = int(time.time())
    return pb.Reservation(
        id=rid,
        source=pb.Endpoint(domain="site-a", point="a-host"),
        destination=pb.Endpoint(domain="site-b", point="b-host"),
        bandwidth_bps=int(gbps * G),
        window=pb.Window(start=now + 60, end=now + 3600),
        strategy=strategy,
        max_paths=paths,
    )


def assert_ledgers_agree(
    cluster: LocalCluster,
    results: list[pb.ReservationResp],
    extra: dict[str, frozenset[str]] | None = None,
) -> None:
    committed = committed_of(results) | (extra or {})
    check = check_ledgers(cluster.reports(), committed)
    assert check.ok, check.summary()


def wait_until(condition: Callable[[], Any], timeout: float = 15.0) -> Any:
    """Poll `condition` until it is truthy (recovery runs in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def states(cluster: LocalCluster, tx: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for domain, report in cluster.reports().items():
        for t in report.transactions:
            if t.transaction_id == tx:
                out[domain] = t.state
    return out
